# SPDX-License-Identifier: MIT
# format's sources in two lists, the one place that says which file is the
# writer's: ms_format builds both (src/format/CMakeLists.txt), and the
# Windows launcher, cross-built with mingw-w64 (src/windows/cross), compiles
# the writer's list and the util files it names. A new fmt_*.c must join
# one list, or configuring fails. The reader uses the writer's fmt_wdelta.c
# too (its per-stack map checks the chunk summaries: fmt_reader_verify_
# summaries); ms_format has both lists, tests/fuzz/run.sh names it.
set(MS_FMT_WRITER_SOURCES
    fmt_writer.c fmt_wchunk.c fmt_wctx.c fmt_wdefs.c fmt_wdelta.c fmt_wevent.c fmt_wlive.c
    fmt_wout.c fmt_wpool.c fmt_wreach.c fmt_wstack.c fmt_wtotals.c fmt_wtgroups.c fmt_wvm.c fmt_wcarry.c fmt_buf.c fmt_crc.c fmt_block.c fmt_zc.c)
set(MS_FMT_WRITER_UTIL_SOURCES util_array.c)
set(MS_FMT_READER_SOURCES fmt_reader.c fmt_rchunk.c fmt_rdefs.c fmt_rnodes.c fmt_rtotals.c fmt_names.c)
