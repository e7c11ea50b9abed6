/* SPDX-License-Identifier: MIT */
/* The reader's state, shared by fmt_reader.c (open, framing, tables),
 * fmt_rdefs.c (DEFS and META records) and fmt_rchunk.c (event decoding). */
#ifndef FMT_READER_INTERNAL_H
#define FMT_READER_INTERNAL_H

#include <stdint.h>
#include <zstd.h>

#include "format/fmt_block_internal.h"
#include "format/fmt_buf_internal.h"
#include "format/fmt_layout_internal.h"
#include "format/fmt_pred_internal.h"
#include "format/fmt_recent_internal.h"
#include "format/fmt_stkcode_internal.h"
#include "format/fmt_tpack_internal.h"
#include "format/fmt_wdelta_internal.h"
#include "memscribe/trace.h"

#define FMT_MAX_IMAGES (1u << 20)  /* bounds tables a corrupt file could inflate */
#define FMT_MAX_IMAGE_JUMP 4096    /* how far past the known images an index may go */
#define FMT_DEFS_PER_FILE_BYTE 256 /* decompressed DEFS bytes per file byte, at most */
#define FMT_DEFS_SLACK (1u << 20)  /* ... plus this, for tiny files */

/* A stack node. image and limit share a word (images < 2^20, limits <
 * 2^12) so that tables of millions of nodes stay at 16 bytes a node. */
struct fmt_rnode {
    uint64_t addr;
    uint32_t parent;
    uint32_t image_limit; /* image | limit << 20; limit 0: the whole chain */
};

#define FMT_RNODE_IMAGE(n) ((n)->image_limit & 0xfffff)
#define FMT_RNODE_LIMIT(n) ((n)->image_limit >> 20)

/* Stack nodes by id, in pages (fmt_rnodes.c). A forgotten node's
 * image_limit is FMT_NODE_FORGOTTEN. */
#define FMT_NODE_PAGE_BITS 12
#define FMT_NODE_PAGE (1u << FMT_NODE_PAGE_BITS)
#define FMT_NODE_FORGOTTEN 0xffffffffu

/* A stack record (STACKS or STACK_CODES) located in a DEFS block: the
 * block's offset, the body's place and length in its payload. */
struct fmt_srec {
    uint64_t defs_off;
    uint32_t pos, len;
    uint32_t type;
};

/* A context: an image's thread as events name it. */
struct fmt_rctx {
    struct fmt_thread_info t;
    char *name;
    /* Its own id, or that of a later context of the same thread, which
     * is listed for both (fmt_rdefs.c, def_context_list). */
    uint32_t listed;
};

/* A run of consecutive stack node ids of one image. */
struct fmt_rrun {
    uint32_t first, n;
};

/* The image table (fmt_reader_stack_image): from node id first on, up to
 * the next entry's first, the nodes are image's. first is 64 bits for
 * util_search_above. */
struct fmt_rimgrun {
    uint64_t first;
    uint32_t image;
};

struct fmt_rimage {
    struct fmt_image_info i;
    char *exe;
    char *argv;
    /* Its stack nodes decoded so far, as runs of ids, kept only where they
     * may be forgotten (FMT_OPEN_STACKS_LATER: fmt_reader_forget_image). */
    struct fmt_rrun *runs;
    uint32_t nr_runs, cap_runs;
    int forgotten;
    uint32_t last_node; /* its highest node id, once the image table is made (0: none) */
    uint32_t main_ctx;  /* id of the context of its thread tid == pid; 0: none yet */
    uint32_t main_row;  /* that thread's row in the thread table */
    /* Its last REACH record, index + 1 (0: none): fmt_reader_find_reach
     * is asked once per block by the leak outputs. */
    uint32_t last_reach;
};

struct fmt_rmodule {
    struct fmt_module_info mi;
    char *path;
};

struct fmt_rpool {
    struct fmt_pool_info pi;
    char *name;
};

/* A REACH record: its blocks' serials, increasing, and their classes. */
struct fmt_rreach {
    struct fmt_reach_info ri;
    char *reason;
    uint64_t *serials;
    uint8_t *classes;
};

struct fmt_rchunk {
    struct fmt_chunk_info c;
    uint32_t stored_size;
    uint64_t defs_offset; /* the DEFS block holding its summary */
    int summarized;
};

/* A block started in the current chunk, indexed by serial - first serial. */
enum { RBLK_NONE, RBLK_HEAP, RBLK_HEAP_ENDED, RBLK_VM };
struct fmt_rblk {
    uint64_t addr;
    uint64_t size;
    uint64_t ts_ns;
    uint32_t stack;
    uint32_t thread; /* of the context that started it */
    uint32_t state;
};

/* Chunk-local indexes of the blocks one context started, in order. */
struct fmt_rlist {
    uint32_t *v;
    uint32_t len;
    uint32_t cap;
};

/* A context active in the chunk: its address prediction and the blocks it
 * started (what same-thread references count back in). */
struct fmt_rslot {
    struct fmt_pred pred;
    struct fmt_rlist started;
};

/* The features that change how every event is read, known in advance for
 * the two layouts of nearly every trace (fmt_reader_next's decoders):
 * FMT_RLAYOUT_1_1 addresses by candidate, nothing of 1.3-1.5;
 * FMT_RLAYOUT_1_5 that and time units, packed times and free ranks;
 * FMT_RLAYOUT_ANY the features as the reader's flags say. */
enum { FMT_RLAYOUT_ANY, FMT_RLAYOUT_1_1, FMT_RLAYOUT_1_5 };

struct fmt_reader {
    int fd;
    int own_fd;
    char *name;
    uint64_t file_size;
    char err[512];
    ZSTD_DCtx *dctx;

    struct fmt_trace_info info;
    char *command;
    char *hostname;
    char *only;
    char *wine_prefix, *wine_dll_dirs; /* META WINE_PREFIX, WINE_DLL_DIR (NUL-separated) */
    int incomplete;
    int addr_cands; /* FMT_FEAT_ADDR_CANDS: heap addresses may name freed ones */
    int pe;         /* FMT_FEAT_PE_PROCESS: Windows kinds allowed */
    int v13;        /* FMT_FEAT_TIME_UNIT (1.3): REF split, facts in FACT_* columns */
    int tpack;      /* FMT_FEAT_TIME_PACK (1.4): time deltas packed */
    int sampled;    /* FMT_FEAT_SAMPLED: info.sample_bytes is set */
    int pools;      /* FMT_FEAT_POOLS (1.4): pool events (FMT_EVF_POOL) allowed */
    int v15;        /* FMT_FEAT_FREE_RANKS (1.5): recent ended addresses, ranked references */
    int v17;        /* FMT_FEAT_REALLOC_PRED (1.7): realloc addresses predicted, class tops;
                       decoded in every layout from FMT_RLAYOUT_1_5 on by this flag */
    int agg;        /* FMT_FEAT_AGGREGATE (1.8): aggregated stretches' kinds allowed */
    int segment;    /* FMT_FEAT_SEGMENT (1.9): a --keep-last segment */
    int counters;   /* FMT_FEAT_COUNTERS (1.13): FMT_EV_COUNTER events */
    int agg_meta;   /* META AGGREGATE: aggregated from the start */
    int agg_defs;   /* DEFS AGGREGATE: the FMT_EV_AGGREGATE event's time and period */
    int estimates;  /* sampled: heap sizes are estimates (fmt_reader_estimates) */
    int verify;     /* each chunk's events against its summary (fmt_reader_verify_summaries) */
    int layout;     /* FMT_RLAYOUT_*: the decoder fmt_reader_next runs (fmt_rchunk.c) */
    uint64_t nr_skipped;
    uint64_t defs_raw_total;
    int loaded_defs_once;

    /* Stack nodes (fmt_rnodes.c): nr_nodes defined in the file, the first
     * nr_decoded of them decoded, in pages of FMT_NODE_PAGE ids (page 0's
     * id 0 unused), each with its count of nodes not forgotten. */
    struct fmt_rnode **npages;
    uint16_t *npage_live;
    uint32_t nr_npages;
    uint32_t nr_nodes;
    uint32_t nr_decoded;
    uint64_t last_addr; /* node nr_decoded's address (STACK_CODES' previous one) */
    /* FMT_OPEN_STACKS_LATER: the stack records, located when the trace
     * was opened and decoded when their nodes are asked for; the DEFS
     * block of the one being decoded (its offset, its bytes). */
    int stacks_later;
    struct fmt_srec *srecs;
    uint32_t nr_srecs, cap_srecs, next_srec;
    struct fmt_buf sraw;
    uint64_t sraw_off;
    struct fmt_stkcode *stkcode; /* STACK_CODES candidate lists (from the first one) */
    /* The image of every node without its address, read from the stack
     * records' parent distances and roots when first asked for
     * (fmt_reader_stack_image); runs of ids, a few tens of thousands on a
     * build of a thousand processes. */
    struct fmt_rimgrun *imgruns;
    uint32_t nr_imgruns, cap_imgruns;
    int imgruns_made;      /* 1 made, 0 not yet, -errno: a corrupt record (every later ask) */
    struct fmt_rctx *ctxs; /* by context id - 1 */
    uint32_t nr_ctxs;
    uint32_t cap_ctxs;
    uint32_t *threads; /* the thread table: ids of the listed contexts */
    uint32_t nr_threads;
    uint32_t cap_threads;
    struct fmt_rimage *images;
    uint32_t nr_images;
    uint32_t cap_images;
    struct fmt_rmodule *mods;
    uint32_t nr_mods;
    uint32_t cap_mods;
    int reach_on;             /* FMT_FEAT_REACH (1.6) */
    int totals_on;            /* FMT_FEAT_TOTALS (1.10) */
    int totals_all;           /* FMT_FEAT_TOTALS_ALL (1.11) */
    int totals_progs;         /* FMT_FEAT_TOTALS_PROGS (1.12) */
    struct fmt_rreach *reach; /* REACH records (1.6), in order */
    uint32_t nr_reach;
    uint32_t cap_reach;
    struct fmt_rpool *pools_tab; /* POOL definitions (1.4), in order */
    uint32_t nr_pools;
    uint32_t cap_pools;
    struct fmt_rchunk *chunks;
    uint32_t nr_chunks;      /* chunks with their summary */
    uint32_t nr_seen_chunks; /* chunk blocks seen while opening */
    uint32_t cap_chunks;

    struct fmt_buf payload; /* one block's stored bytes */
    struct fmt_buf raw;     /* its decompressed bytes */

    /* Decoding of the current chunk. */
    uint32_t next_chunk; /* the chunk to load when the current one ends */
    uint32_t end_chunk;  /* none from here is loaded (fmt_reader_seek_range); 0: no end */
    uint32_t cur_chunk;
    int loaded;
    int failed; /* the error of a chunk that failed to decode, until a seek */
    /* What fmt_reader_next runs: the decoder of the layout, or after a
     * failure the one that returns it (set by fmt_rchunk_reset). */
    int (*next)(struct fmt_reader *r, struct fmt_event *ev);
    uint32_t ev_left;
    uint32_t ev_index;
    struct fmt_buf col[FMT_NR_COLUMNS];
    struct fmt_cur cur[FMT_NR_COLUMNS];
    uint64_t chunk_first_serial;
    uint64_t next_serial;
    uint64_t end_serial;
    uint64_t prev_ts;
    uint64_t chunk_first_ts, chunk_last_ts; /* the chunk summary's times */
    struct fmt_tpack tq[2];                 /* TIME's and FREE_TIME's group being read (1.4) */
    struct fmt_recent recent;               /* the chunk's ended heap addresses (1.5) */
    uint64_t prev_fact_addr;                /* FACT_ADDR's previous address (1.3) */
    uint64_t prev_fact_ts;                  /* FACT_TIME's previous time (1.3) */
    uint64_t prev_fact_serial;              /* the previous earlier-chunk block's serial (1.5) */
    uint32_t prev_stack[2];
    uint32_t ctx;
    /* verify: the chunk's per-stack live heap change, from its events (the
     * writer's map, fmt_wdelta_internal.h), held against its summary's. */
    struct fmt_wdeltas vdeltas;
    uint64_t vgen;
    /* The contexts active in the chunk, in slots (at most
     * FMT_MAX_ACTIVE_CTX): ctx_slot[ctx] = chunk generation <<
     * FMT_SLOT_BITS | slot. */
    uint64_t gen;
    uint64_t *ctx_slot; /* sized nr_ctxs + 1 */
    struct fmt_rslot *slots;
    uint32_t nr_slots;
    uint32_t cap_slots;
    uint32_t slot;        /* the current context's */
    struct fmt_rslot *sl; /* &slots[slot] */
    struct fmt_rblk *blks;
    uint64_t cap_blks;
};

/* Format "NAME: offset OFF: message" into r->err and return rc. */
__attribute__((format(printf, 4, 5))) int fmt_rerr(struct fmt_reader *r, int rc, uint64_t off,
                                                   const char *fmt, ...);

/* Read, check and decompress the block at off into r->raw. *h gets the
 * header. Returns 0, -EPROTO (message set) or -errno. */
int fmt_rblock_load(struct fmt_reader *r, uint64_t off, struct fmt_block_hdr *h);

/* Parse a META payload / a DEFS payload (in r->raw) of the block at off. */
int fmt_rdefs_meta(struct fmt_reader *r, uint64_t off);
int fmt_rdefs_parse(struct fmt_reader *r, uint64_t off);

/* Chunk k's record of type (SUMMARY, TOTALS: records whose first field is
 * the chunk's number) in the DEFS block that holds chunk k's summary: its
 * body in *out, the block's offset in *off. 0, or the reader's error
 * ("WHAT of chunk K not found", a bad block). */
int fmt_rdefs_chunk_record(struct fmt_reader *r, uint32_t k, unsigned type, const char *what,
                           struct fmt_cur *out, uint64_t *off);

/* Find chunk k's SUMMARY record in its DEFS block and report its deltas. */
int fmt_rdefs_chunk_delta(struct fmt_reader *r, uint32_t k, fmt_stack_live_fn *fn, void *arg);

/* Make sure image exists in the table (an event may name it before its
 * PROCESS_START). Returns 0 or -errno. */
int fmt_rdefs_image(struct fmt_reader *r, uint32_t image, uint64_t off);

/* Stack nodes (fmt_rnodes.c). fmt_rnode_get: node id, decoded and not
 * forgotten, or NULL. fmt_rnodes_need: decode the stack records up to
 * node id if they were left for later; 0, or -errno with the message set
 * (-ESTALE: id was forgotten). fmt_rnode_new: room for node
 * nr_decoded + 1 (NULL: out of memory); fmt_rnode_done: it is image's,
 * decoded. fmt_rnodes_locate: a stack record met while opening with
 * stacks left for later: located and counted. fmt_rnodes_free: all. */
static inline const struct fmt_rnode *fmt_rnode_get(const struct fmt_reader *r, uint32_t id)
{
    if (!id || id > r->nr_decoded || !r->npages[id >> FMT_NODE_PAGE_BITS])
        return NULL;
    const struct fmt_rnode *n = &r->npages[id >> FMT_NODE_PAGE_BITS][id & (FMT_NODE_PAGE - 1)];
    return n->image_limit == FMT_NODE_FORGOTTEN ? NULL : n;
}
int fmt_rnodes_need(struct fmt_reader *r, uint32_t id);
struct fmt_rnode *fmt_rnode_new(struct fmt_reader *r);
int fmt_rnode_done(struct fmt_reader *r, uint32_t image);
int fmt_rnodes_locate(struct fmt_reader *r, uint32_t type, const uint8_t *body, uint64_t len,
                      uint64_t off);
void fmt_rnodes_free(struct fmt_reader *r);

/* Decode a stack record (STACKS or STACK_CODES) of the DEFS block at off:
 * its nodes follow node nr_decoded. Returns 0 or -errno, message set. */
int fmt_rdefs_stacks(struct fmt_reader *r, uint32_t type, const uint8_t *body, uint64_t len,
                     uint64_t off);

/* Forget the decoded chunk (after a seek). */
/* Forget the chunk being read; fmt_reader_open calls it once the layout is
 * known. */
void fmt_rchunk_reset(struct fmt_reader *r);

#endif
