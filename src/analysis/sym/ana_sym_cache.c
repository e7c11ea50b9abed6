/* SPDX-License-Identifier: MIT */
/* The symbol cache on disk (ana_symbolize.h, ana_sym_options.cache): what
 * each address of a module came to, by the module's build id and offset,
 * kept in a file that every symbolizer given it reads before it opens a
 * module and appends to when it is done. memscribe serve gives one to every
 * query it runs, so that the second scrape of /metrics, or the page's
 * second view, reads no DWARF: libc's debug file alone is 30 ms of zlib
 * per process, a large C++ program's seconds.
 *
 * The file: the 8 bytes "MSSYMC01", a little-endian u64 key (the options
 * the frames depend on, and memscribe's version: a cache made otherwise
 * is emptied, never read), then records, each a u32 payload length, a u64
 * FNV-1a hash of the payload and the payload:
 *   u8 type: 1 an address, 2 a module
 *   u8 build id length (4..FMT_MAX_BUILD_ID), the build id
 *   an address: u64 offset in the module, u8 kind (ana_sym_addr_kind), u8
 *     frames (1..ANA_SYM_MAX_INLINE), then per frame u8 flags (1 inlined,
 *     2 signal frame, 4 has offset), u32 line, u32 column, u64 function
 *     offset, the function and the file each as a u16 length (0xffff:
 *     none) and their bytes
 *   a module: its note (why its files were not used), as a u16 length
 *     (0xffff: none) and its bytes; written when the module is first read
 * A record that does not check (a write cut short by a kill, a bad length)
 * ends the file: it is cut there, under the lock, before anything is
 * appended. Reading and appending take an exclusive flock, so that
 * the queries serve runs at once never interleave. */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/sym/ana_sym_internal.h"
#include "memscribe/event.h"
#include "util/util_array.h"

#define MAGIC "MSSYMC01"
#define HEADER_SIZE 16u
#define RECORD_HEAD 12u /* u32 length, u64 hash */
#define NO_STRING 0xffffu
/* A record is at most a full inline chain of long names: beyond, a bad length. */
#define MAX_PAYLOAD (1u << 22)
/* The file stops growing here: a 991-process build's addresses take some
 * 40 MiB, and serve keeps its cache in memory. */
#define MAX_FILE ((off_t)256 << 20)

enum { REC_ADDRESS = 1, REC_MODULE = 2 };
enum { FLAG_INLINED = 1, FLAG_SIGNAL = 2, FLAG_OFFSET = 4 };

struct slot {
    uint64_t hash; /* of (build id, offset, kind, type); 0: empty */
    size_t at;     /* the record's payload in the mapping */
};

struct ana_sym_cache {
    int fd;
    uint8_t head[HEADER_SIZE]; /* the file's header for this key */
    const uint8_t *map;        /* the file as read when opened */
    struct slot *slots;
    size_t cap, nr; /* cap: a power of two */
    uint8_t *out;   /* records to append at close */
    size_t out_len, out_cap;
    char *note; /* a module note decoded for ana_sym_cache_module */
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *b = p;

    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

#define FNV_START 0xcbf29ce484222325ull

/* The n low bytes of v at p, little-endian. */
static void le_put(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t key_hash(unsigned type, const uint8_t *bid, uint32_t len, uint64_t off,
                         unsigned kind)
{
    uint8_t head[2] = {(uint8_t)type, (uint8_t)kind};
    uint64_t h = fnv(fnv(fnv(FNV_START, head, 2), bid, len), &off, sizeof(off));

    return h ? h : 1;
}

uint64_t ana_sym_cache_key(const struct ana_sym_options *o)
{
    uint64_t h = fnv(FNV_START, MAGIC, 8);
    const char *parts[] = {o->sysroot, o->symbol_path, MEMSCRIBE_VERSION};

    for (size_t i = 0; i < o->nr_debug_dirs; i++)
        h = fnv(h, o->debug_dirs[i], strlen(o->debug_dirs[i]) + 1);
    for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
        h = fnv(h, parts[i] ? parts[i] : "", parts[i] ? strlen(parts[i]) + 1 : 1);
    return h;
}

static int fail(char *why, size_t size, const char *what, int rc)
{
    snprintf(why, size, "%s", what);
    return rc;
}

/* A little-endian reader over one payload. */
struct rd {
    const uint8_t *p, *end;
    bool bad;
};

static uint64_t get(struct rd *r, unsigned n)
{
    uint64_t v = 0;

    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        return 0;
    }
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)r->p[i] << (8 * i);
    r->p += n;
    return v;
}

/* A string of the payload: *s and *len, *s NULL for none. */
static void get_string(struct rd *r, const uint8_t **s, size_t *len)
{
    size_t n = (size_t)get(r, 2);

    *s = NULL;
    *len = 0;
    if (r->bad || n == NO_STRING)
        return;
    if ((size_t)(r->end - r->p) < n) {
        r->bad = true;
        return;
    }
    *s = r->p;
    *len = n;
    r->p += n;
}

/* A record's key: its type, build id and, for an address, offset and kind. */
struct key {
    unsigned type, len, kind;
    const uint8_t *bid;
    uint64_t off;
};

/* The key of the payload at r, the reader left at what follows. false: a
 * bad record. */
static bool read_key(struct rd *r, struct key *k)
{
    *k = (struct key){.type = (unsigned)get(r, 1), .len = (unsigned)get(r, 1), .bid = r->p};
    if (r->bad || (k->type != REC_ADDRESS && k->type != REC_MODULE) || k->len < 4 ||
        k->len > FMT_MAX_BUILD_ID || (size_t)(r->end - r->p) < k->len)
        return false;
    r->p += k->len;
    if (k->type == REC_ADDRESS) {
        k->off = get(r, 8);
        k->kind = (unsigned)get(r, 1);
    }
    return !r->bad;
}

static int slots_put(struct ana_sym_cache *c, uint64_t hash, size_t at)
{
    if ((c->nr + 1) * 2 > c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 1024;
        struct slot *v = calloc(cap, sizeof(*v));

        if (!v)
            return -ENOMEM;
        for (size_t i = 0; i < c->cap; i++) {
            if (!c->slots[i].hash)
                continue;
            size_t k = c->slots[i].hash & (cap - 1);
            while (v[k].hash)
                k = (k + 1) & (cap - 1);
            v[k] = c->slots[i];
        }
        free(c->slots);
        c->slots = v;
        c->cap = cap;
    }
    size_t k = hash & (c->cap - 1);
    while (c->slots[k].hash && c->slots[k].hash != hash)
        k = (k + 1) & (c->cap - 1);
    if (!c->slots[k].hash)
        c->nr++;
    c->slots[k] = (struct slot){hash, at}; /* the later record of a key wins: the same frames */
    return 0;
}

/* Index the records of map[HEADER_SIZE, size): the length of the valid
 * part (a record that does not check ends it), or -ENOMEM. */
static long long index_records(struct ana_sym_cache *c, const uint8_t *map, size_t size)
{
    size_t at = HEADER_SIZE;

    while (size - at >= RECORD_HEAD) {
        struct rd h = {map + at, map + size, false};
        uint32_t len = (uint32_t)get(&h, 4);
        uint64_t sum = get(&h, 8);
        struct key k;

        if (len > MAX_PAYLOAD || size - at - RECORD_HEAD < len ||
            fnv(FNV_START, map + at + RECORD_HEAD, len) != sum)
            break;
        struct rd r = {map + at + RECORD_HEAD, map + at + RECORD_HEAD + len, false};
        if (!read_key(&r, &k))
            break;
        if (slots_put(c, key_hash(k.type, k.bid, k.len, k.off, k.kind), at + RECORD_HEAD))
            return -ENOMEM;
        at += RECORD_HEAD + len;
    }
    return (long long)at;
}

/* Read the file (into memory: another key's symbolizer may empty it
 * meanwhile, which would fault a mapping) and index it; make its header
 * if it is empty or of another key, and cut a bad tail, all under an
 * exclusive lock. */
static int load(struct ana_sym_cache *c, uint64_t key, char *why, size_t size)
{
    uint8_t *head = c->head;
    struct stat st;
    int rc = 0;

    memcpy(head, MAGIC, 8);
    le_put(head + 8, key, 8);
    if (flock(c->fd, LOCK_EX) || fstat(c->fd, &st))
        return fail(why, size, strerror(errno), -errno);
    size_t len = (size_t)st.st_size, got = 0;
    uint8_t *data = len ? malloc(len) : NULL;
    if (len && !data)
        rc = -ENOMEM;
    while (!rc && got < len) {
        ssize_t n = pread(c->fd, data + got, len - got, (off_t)got);
        if (n < 0)
            rc = fail(why, size, strerror(errno), -errno);
        else if (n == 0)
            len = got; /* cut meanwhile: what was read */
        else
            got += (size_t)n;
    }
    if (!rc && len > 0 && (len < 8 || memcmp(data, MAGIC, 8)))
        rc = fail(why, size, "not a symbol cache", -EINVAL);
    else if (!rc && len > 0 && (len < HEADER_SIZE || memcmp(data, head, HEADER_SIZE)))
        len = 0; /* another key's: start over */
    if (!rc && len > 0) {
        long long valid = index_records(c, data, len);

        if (valid < 0)
            rc = -ENOMEM;
        else if ((size_t)valid < len && ftruncate(c->fd, (off_t)valid))
            rc = fail(why, size, strerror(errno), -errno);
        c->map = data;
        data = NULL;
    }
    if (!rc && len == 0 &&
        (ftruncate(c->fd, 0) || pwrite(c->fd, head, HEADER_SIZE, 0) != HEADER_SIZE))
        rc = fail(why, size, strerror(errno), -errno);
    free(data);
    flock(c->fd, LOCK_UN);
    return rc;
}

int ana_sym_cache_open(struct ana_sym_cache **out, const char *path, uint64_t key, char *why,
                       size_t why_size)
{
    struct stat st;
    struct ana_sym_cache *c;
    int rc;

    *out = NULL;
    if (!lstat(path, &st) && S_ISLNK(st.st_mode) && st.st_uid != geteuid() && st.st_uid != 0)
        return fail(why, why_size, "a symbolic link of another user's", -EPERM);
    if (!(c = calloc(1, sizeof(*c))))
        return -ENOMEM;
    c->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOCTTY | O_NONBLOCK, 0600);
    if (c->fd < 0)
        rc = fail(why, why_size, strerror(errno), -errno);
    else if (fstat(c->fd, &st))
        rc = fail(why, why_size, strerror(errno), -errno);
    else if (!S_ISREG(st.st_mode))
        rc = fail(why, why_size, "not a regular file", -EINVAL);
    else if (st.st_uid != geteuid())
        rc = fail(why, why_size, "another user's file", -EPERM);
    else
        rc = load(c, key, why, why_size);
    if (rc) {
        ana_sym_cache_close(c);
        return rc;
    }
    *out = c;
    return 0;
}

static const struct slot *find(const struct ana_sym_cache *c, uint64_t hash)
{
    if (!c->cap)
        return NULL;
    for (size_t k = hash & (c->cap - 1); c->slots[k].hash; k = (k + 1) & (c->cap - 1))
        if (c->slots[k].hash == hash)
            return &c->slots[k];
    return NULL;
}

/* A reader at the payload of a slot, past its key (checked again: the hash
 * is of the key, not the key). */
static bool payload_at(const struct ana_sym_cache *c, const struct slot *s, unsigned type,
                       const uint8_t *bid, uint32_t len, uint64_t off, unsigned kind, struct rd *r)
{
    struct rd h = {c->map + s->at - RECORD_HEAD, c->map + s->at, false};
    struct key k;

    *r = (struct rd){c->map + s->at, c->map + s->at + get(&h, 4), false};
    return read_key(r, &k) && k.type == type && k.len == len && !memcmp(k.bid, bid, len) &&
           k.off == off && k.kind == kind;
}

static const char *arena_string(struct ana_sym_arena *a, const uint8_t *s, size_t len, bool *nomem)
{
    char *p;

    if (!s)
        return NULL;
    if (!(p = ana_sym_arena_strndup(a, (const char *)s, len)))
        *nomem = true;
    return p;
}

int ana_sym_cache_find(struct ana_sym_cache *c, const uint8_t *build_id, uint32_t build_id_len,
                       uint64_t offset, unsigned kind, const struct ana_sym_frame *base,
                       struct ana_sym_frame *f, struct ana_sym_arena *a)
{
    const struct slot *s = find(c, key_hash(REC_ADDRESS, build_id, build_id_len, offset, kind));
    struct rd r;
    bool nomem = false;

    if (!s || !payload_at(c, s, REC_ADDRESS, build_id, build_id_len, offset, kind, &r))
        return 0;
    unsigned n = (unsigned)get(&r, 1);
    if (n < 1 || n > ANA_SYM_MAX_INLINE)
        return 0;
    for (unsigned i = 0; i < n && !r.bad; i++) {
        unsigned flags = (unsigned)get(&r, 1);
        uint64_t line = get(&r, 4), column = get(&r, 4), function_offset = get(&r, 8);
        const uint8_t *fn, *file;
        size_t fn_len, file_len;

        get_string(&r, &fn, &fn_len);
        get_string(&r, &file, &file_len);
        f[i] = (struct ana_sym_frame){.addr = base->addr,
                                      .module = base->module,
                                      .module_offset = base->module_offset,
                                      .function = arena_string(a, fn, fn_len, &nomem),
                                      .function_offset = function_offset,
                                      .has_offset = flags & FLAG_OFFSET,
                                      .file = arena_string(a, file, file_len, &nomem),
                                      .line = (uint32_t)line,
                                      .column = (uint32_t)column,
                                      .inlined = flags & FLAG_INLINED,
                                      .signal_frame = flags & FLAG_SIGNAL};
    }
    if (nomem)
        return -ENOMEM;
    return r.bad ? 0 : (int)n;
}

bool ana_sym_cache_module(struct ana_sym_cache *c, const uint8_t *build_id, uint32_t build_id_len,
                          const char **note)
{
    const struct slot *s = find(c, key_hash(REC_MODULE, build_id, build_id_len, 0, 0));
    const uint8_t *text;
    size_t len;
    struct rd r;

    *note = NULL;
    if (!s || !payload_at(c, s, REC_MODULE, build_id, build_id_len, 0, 0, &r))
        return false;
    get_string(&r, &text, &len);
    if (r.bad)
        return false;
    free(c->note);
    c->note = text ? strndup((const char *)text, len) : NULL;
    *note = c->note;
    return !text || c->note;
}

/* Room for n more bytes of pending records: where they go, or NULL with
 * *nomem set. */
static uint8_t *room(struct ana_sym_cache *c, size_t n, bool *nomem)
{
    if (*nomem || UTIL_ARRAY_RESERVE(c->out, c->out_cap, c->out_len + n, 4096)) {
        *nomem = true;
        return NULL;
    }
    c->out_len += n;
    return c->out + c->out_len - n;
}

/* Append n little-endian bytes of v to the pending records. */
static void put(struct ana_sym_cache *c, uint64_t v, unsigned n, bool *nomem)
{
    uint8_t *p = room(c, n, nomem);

    if (p)
        le_put(p, v, n);
}

static void put_bytes(struct ana_sym_cache *c, const void *b, size_t n, bool *nomem)
{
    uint8_t *p = room(c, n, nomem);

    if (p)
        memcpy(p, b, n);
}

static void put_string(struct ana_sym_cache *c, const char *s, bool *nomem)
{
    size_t len = s ? strlen(s) : 0;

    if (len >= NO_STRING)
        len = NO_STRING - 1; /* a name of 64 KiB is cut: names are compared whole nowhere */
    put(c, s ? len : NO_STRING, 2, nomem);
    if (s)
        put_bytes(c, s, len, nomem);
}

/* Start a record: its head, filled in by end_record. */
static size_t start_record(struct ana_sym_cache *c, unsigned type, const uint8_t *bid, uint32_t len,
                           bool *nomem)
{
    size_t at = c->out_len;

    put(c, 0, 4, nomem);
    put(c, 0, 8, nomem);
    put(c, type, 1, nomem);
    put(c, len, 1, nomem);
    put_bytes(c, bid, len, nomem);
    return at;
}

static int end_record(struct ana_sym_cache *c, size_t at, bool nomem)
{
    if (nomem) {
        c->out_len = at;
        return -ENOMEM;
    }
    size_t len = c->out_len - at - RECORD_HEAD;
    uint64_t sum = fnv(FNV_START, c->out + at + RECORD_HEAD, len);

    le_put(c->out + at, len, 4);
    le_put(c->out + at + 4, sum, 8);
    return 0;
}

int ana_sym_cache_add(struct ana_sym_cache *c, const uint8_t *build_id, uint32_t build_id_len,
                      uint64_t offset, unsigned kind, const struct ana_sym_frame *f, uint32_t n)
{
    bool nomem = false;
    size_t at = start_record(c, REC_ADDRESS, build_id, build_id_len, &nomem);

    put(c, offset, 8, &nomem);
    put(c, kind, 1, &nomem);
    put(c, n, 1, &nomem);
    for (uint32_t i = 0; i < n; i++) {
        put(c,
            (f[i].inlined ? FLAG_INLINED : 0u) | (f[i].signal_frame ? FLAG_SIGNAL : 0u) |
                (f[i].has_offset ? FLAG_OFFSET : 0u),
            1, &nomem);
        put(c, f[i].line, 4, &nomem);
        put(c, f[i].column, 4, &nomem);
        put(c, f[i].function_offset, 8, &nomem);
        put_string(c, f[i].function, &nomem);
        put_string(c, f[i].file, &nomem);
    }
    return end_record(c, at, nomem);
}

int ana_sym_cache_add_module(struct ana_sym_cache *c, const uint8_t *build_id,
                             uint32_t build_id_len, const char *note)
{
    bool nomem = false;
    size_t at = start_record(c, REC_MODULE, build_id, build_id_len, &nomem);

    put_string(c, note, &nomem);
    return end_record(c, at, nomem);
}

void ana_sym_cache_close(struct ana_sym_cache *c)
{
    if (!c)
        return;
    uint8_t head[HEADER_SIZE];

    if (c->out_len && c->fd >= 0 && !flock(c->fd, LOCK_EX)) {
        /* at the end as it is now: another query may have appended; and
         * not at all if a symbolizer of other options made it its own
         * meanwhile (its header) */
        off_t end = lseek(c->fd, 0, SEEK_END);
        size_t done = 0;

        if (pread(c->fd, head, HEADER_SIZE, 0) != HEADER_SIZE || memcmp(head, c->head, HEADER_SIZE))
            end = -1;

        while (end >= (off_t)HEADER_SIZE && end + (off_t)c->out_len <= MAX_FILE &&
               done < c->out_len) {
            ssize_t w = pwrite(c->fd, c->out + done, c->out_len - done, end + (off_t)done);
            if (w <= 0)
                break;
            done += (size_t)w;
        }
        if (done < c->out_len && end >= (off_t)HEADER_SIZE && ftruncate(c->fd, end))
            (void)0; /* a tail cut short fails its check and is cut by the next reader */
        flock(c->fd, LOCK_UN);
    }
    free((void *)c->map);
    if (c->fd >= 0)
        close(c->fd);
    free(c->slots);
    free(c->out);
    free(c->note);
    free(c);
}
