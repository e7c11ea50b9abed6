#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# memscribe export of several formats in one command (repeated --to FORMAT
# -o FILE, docs/export.md "Several formats at once"): each output equals the
# one its own export writes, byte for byte (a database: its SQL dump); the
# pairing's usage errors; a failed output leaves no output behind.
source "$(dirname "$0")/export_lib.sh"

# What a file holds, for comparing: a database's dump, a pprof profile's
# samples (alone, pprof writes each process's at its end: the same samples
# in another order), another file as is.
content() {
    case $1 in
    *.db) sqlite3 "$1" .dump ;;
    *.pb.gz) python3 "$(dirname "$0")/pprof_samples.py" "$1" ;;
    *) cat "$1" ;;
    esac
}

recorded
tr=$T/prog.mscr
opts=(--cost leaked --snapshots 20 --threshold 0.5)
names=(massif heaptrack dhat pprof folded sqlite csv)
files=(m.out h.gz d.json p.pb.gz f.folded s.db c.csv)
args=()
for i in "${!names[@]}"; do
    args+=(--to "${names[i]}" -o "$T/all.${files[i]}")
done
"$M" export "${args[@]}" "${opts[@]}" "$tr" 2>"$T/all.err" || fail "several: $(cat "$T/all.err")"
for i in "${!names[@]}"; do
    f=${names[i]}
    own=() # the options of this format only: the others would be usage errors
    case $f in
    folded) own=("${opts[@]:0:2}") ;;
    massif) own=("${opts[@]:2}") ;;
    esac
    "$M" export --to "$f" -o "$T/one.${files[i]}" "$tr" "${own[@]}" 2>"$T/one.err" ||
        fail "$f alone failed: $(cat "$T/one.err")"
    cmp -s <(content "$T/all.${files[i]}") <(content "$T/one.${files[i]}") ||
        fail "$f: one of several differs from its own export"
done
# pprof alone from the whole model (MEMSCRIBE_FOLD=0), as with others: byte
# for byte.
MEMSCRIBE_FOLD=0 "$M" export --to pprof -o "$T/whole.pb.gz" "$tr"
cmp -s "$T/all.p.pb.gz" "$T/whole.pb.gz" || fail "pprof: one of several differs from its whole export"

# One output may go to standard output; -o names the output of the --to
# before it, and one given before any --to that of the next.
"$M" export --to folded --to csv -o "$T/pair.csv" "$tr" >"$T/pair.folded"
cmp -s "$T/pair.folded" <("$M" export --to folded "$tr") || fail "folded to stdout differs"
cmp -s "$T/pair.csv" "$T/one.c.csv" || fail "csv of a pair differs"
"$M" export -o "$T/first.dhat" -o "$T/second.csv" --to dhat --to csv "$tr"
cmp -s "$T/first.dhat" "$T/one.d.json" || fail "the first -o is not the first --to's"
cmp -s "$T/second.csv" "$T/one.c.csv" || fail "the second -o is not the second --to's"

syn=$(synth)
expect_exit 2 "more -o than --to" "$M" export --to csv -o "$T/a" -o "$T/b" "$syn"
expect_exit 2 "2 outputs go to standard output" "$M" export --to csv --to folded "$syn"
expect_exit 2 "two outputs go to $T/same" "$M" export --to csv -o "$T/same" --to dhat -o "$T/same" "$syn"
expect_exit 2 "--cost is for --to folded" "$M" export --to csv -o "$T/x" --to dhat -o "$T/y" --cost peak "$syn"
expect_exit 2 "--to sqlite needs -o DATABASE" "$M" export --to csv -o "$T/z" --to sqlite "$syn"
# One output fails: none is left behind, and the message names it.
expect_exit 1 "/dev/full: writing failed" \
    "$M" export --to csv -o "$T/gone.csv" --to massif -o /dev/full "$syn"
[ ! -e "$T/gone.csv" ] || fail "an output of a failed export was left"
echo "export_several: ok"
