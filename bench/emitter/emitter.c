/*
 * emitter: the bench's stamping load server (bench/README.md, "The emitter").
 *
 * It speaks just enough of SGLang's native /generate stream and OpenAI's /v1/completions stream for
 * `warmbench run --flush none --verify-cache off` to finish a sweep, and its point is the clock. Every event
 * is due at an exact time (receipt + TTFT + k * ITL, the first moved to a free slot of the ITL period with
 * --min-gap-us; with --sync, the k-th tick of one global decode-step grid, so that every stream's event of a
 * step is due at once, as in a real engine's batch), leaves in ONE send() on
 * a TCP_NODELAY socket, and is stamped (CLOCK_REALTIME, epoch ms with µs precision: the clock of Bun's
 * performance.timeOrigin + performance.now()) right after that send() returns. The stamps go to a truth log in
 * the format of `warmbench mock --truth` (src/mock/truth.ts), so the bench joins a client's receive times with
 * them unchanged. Lateness = stamp - due is the proof that the schedule was kept: GET /emitter/stats serves
 * its p50/p99/max (all events, and the steady state), and the same JSON is printed on stderr at exit.
 *
 * One thread, one epoll loop (SCHED_FIFO with --rt): sleep (epoll_pwait2, ns timeout) until the next due event
 * (or --spin-us before it, then spin; off by default, see the README), write. Every I/O handler does bounded work (one recv of at most 32 KiB, at most 64 accepts)
 * and due events fire between any two handlers. Request bodies are scanned as they arrive and never stored:
 * the prompt's ids are counted, max_new_tokens / max_tokens and the stream options are picked out. The truth
 * log is written only while no stream is running, and at exit, so that no file write delays an event.
 *
 *   cc -O2 -Wall -o emitter emitter.c
 *   emitter [--host H] [--port P] [--ttft-ms MS] [--itl-ms MS] [--events N] [--tokens-per-event T]
 *           [--sync | --min-gap-us US] [--truth FILE] [--spin-us US] [--rt] [--model-name NAME] [--vocab-size N]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------------------------------ options */

typedef struct {
    const char *host;
    int port;
    double ttft_ms;
    double itl_ms;           /* gap between two events of one stream (one decode step) */
    long events;             /* events per request; 0: max_new_tokens (or max_tokens) / tokens_per_event */
    long tokens_per_event;
    int sync;
    double min_gap_us;       /* 0: every stream keeps receipt + TTFT as its phase */
    const char *truth_path;
    double spin_us;
    int rt;
    const char *model_name;
    long vocab_size;
} Options;

static Options opt = {
    .host = "127.0.0.1", .port = 0, .ttft_ms = 20, .itl_ms = 20, .events = 0, .tokens_per_event = 1, .sync = 0, .min_gap_us = 0,
    .truth_path = NULL, .spin_us = 0, .rt = 0, .model_name = "emitter-model", .vocab_size = 151936,
};

/* SGLang's defaults when the body does not say (SamplingParams; OpenAI's CompletionRequest). */
#define DEFAULT_MAX_NEW_TOKENS 128
#define DEFAULT_MAX_TOKENS 16
#define READ_CHUNK 32768
#define MAX_HEAD_BYTES 16384
#define MAX_BUFFERED_BYTES (1 << 20)
#define ACCEPTS_PER_WAKE 64
#define MAX_EVENTS 256

/* ----------------------------------------------------------------------------------------------- helpers */

static void die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("emitter: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void *xrealloc(void *p, size_t n) {
    void *q = realloc(p, n ? n : 1);
    if (!q) die("out of memory (%zu bytes)", n);
    return q;
}

static inline int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/** A growable byte buffer. */
typedef struct {
    char *p;
    size_t len, cap;
} Buf;

static void buf_reserve(Buf *b, size_t extra) {
    if (b->len + extra <= b->cap) return;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + extra) cap *= 2;
    b->p = xrealloc(b->p, cap);
    b->cap = cap;
}

static void buf_put(Buf *b, const void *s, size_t n) {
    buf_reserve(b, n);
    memcpy(b->p + b->len, s, n);
    b->len += n;
}

#define BUF_LIT(b, lit) buf_put((b), (lit), sizeof(lit) - 1)

static void buf_str(Buf *b, const char *s) { buf_put(b, s, strlen(s)); }

static void buf_fmt(Buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    buf_reserve(b, (size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

static void buf_i64(Buf *b, long long v) {
    char tmp[24];
    int i = sizeof tmp;
    int neg = v < 0;
    unsigned long long u = neg ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (neg) tmp[--i] = '-';
    buf_put(b, tmp + i, sizeof tmp - (size_t)i);
}

/** Epoch ms with exactly µs precision, from ns (no floating-point rounding). */
static void buf_epoch_ms(Buf *b, int64_t ns) {
    int64_t us = ns / 1000;
    buf_i64(b, us / 1000);
    char frac[5] = {'.', (char)('0' + us / 100 % 10), (char)('0' + us / 10 % 10), (char)('0' + us % 10), 0};
    buf_put(b, frac, 4);
}

/** A JSON number, or null for NaN / infinities. */
static void buf_num(Buf *b, double v, int decimals) {
    if (!isfinite(v)) BUF_LIT(b, "null");
    else buf_fmt(b, "%.*f", decimals, v);
}

/** A quoted JSON string (control characters, quotes and backslashes escaped). */
static void buf_json_str(Buf *b, const char *s) {
    buf_put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            buf_put(b, e, 2);
        } else if (*p < 0x20) {
            buf_fmt(b, "\\u%04x", *p);
        } else {
            buf_put(b, p, 1);
        }
    }
    buf_put(b, "\"", 1);
}

/* ------------------------------------------------------------------------------------------ body scanner */

/*
 * A streaming scan of a JSON request body: it never holds the body (a 131k-token prompt is about 1 MB), only
 * the last string (for keys) and a few numbers. Keys are matched wherever they appear: max_new_tokens lives in
 * sampling_params, continuous_usage_stats in stream_options, and no other key of these bodies shares a name.
 */
enum { K_NONE, K_OTHER, K_MAX_NEW_TOKENS, K_MAX_TOKENS, K_CONTINUOUS_USAGE, K_INCLUDE_USAGE, K_STREAM, K_IDS };
enum { IDS_NOT_YET = -1, IDS_DONE = -2 };

typedef struct {
    int in_str, esc;
    char str[32];
    int str_len;
    int value_of;     /* K_*: the key whose value comes next */
    int depth;
    int ids_depth;    /* depth of the prompt's id array while counting it; IDS_NOT_YET / IDS_DONE */
    int in_num, num_int;
    long long num;
    long long ids;
    long long max_new_tokens, max_tokens; /* -1: absent */
    int continuous_usage, include_usage, stream_false;
} Scanner;

static void scanner_reset(Scanner *s) {
    memset(s, 0, sizeof *s);
    s->ids_depth = IDS_NOT_YET;
    s->max_new_tokens = -1;
    s->max_tokens = -1;
}

static int key_of(const char *k, int len) {
#define KEY_IS(lit) (len == (int)sizeof(lit) - 1 && memcmp(k, lit, sizeof(lit) - 1) == 0)
    if (KEY_IS("max_new_tokens")) return K_MAX_NEW_TOKENS;
    if (KEY_IS("max_tokens")) return K_MAX_TOKENS;
    if (KEY_IS("continuous_usage_stats")) return K_CONTINUOUS_USAGE;
    if (KEY_IS("include_usage")) return K_INCLUDE_USAGE;
    if (KEY_IS("stream")) return K_STREAM;
    if (KEY_IS("input_ids") || KEY_IS("prompt")) return K_IDS;
    return K_OTHER;
#undef KEY_IS
}

static void end_number(Scanner *s) {
    s->in_num = 0;
    if (!s->num_int) return;
    if (s->value_of == K_MAX_NEW_TOKENS) s->max_new_tokens = s->num;
    else if (s->value_of == K_MAX_TOKENS) s->max_tokens = s->num;
}

static void scan(Scanner *s, const char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)p[i];
        if (s->in_str) {
            if (s->esc) s->esc = 0;
            else if (c == '\\') s->esc = 1;
            else if (c == '"') s->in_str = 0;
            else if (s->str_len < (int)sizeof s->str - 1) s->str[s->str_len++] = (char)c;
            continue;
        }
        if (s->depth == s->ids_depth) {
            /* Inside the prompt's ids (digits, commas, blanks): a tight loop, this is where the megabytes are. */
            for (; i < n; i++) {
                c = (unsigned char)p[i];
                if (c >= '0' && c <= '9') {
                    if (!s->in_num) {
                        s->in_num = 1;
                        s->num_int = 0;
                        s->ids++;
                    }
                } else if (c == ',' || c == ' ' || c == '\n' || c == '\r' || c == '\t') {
                    s->in_num = 0;
                } else {
                    break;
                }
            }
            if (i == n) return;
        }
        if (s->in_num) {
            if (c >= '0' && c <= '9') {
                if (s->num < 1000000000000LL) s->num = s->num * 10 + (c - '0');
                continue;
            }
            if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
                s->num_int = 0;
                continue;
            }
            end_number(s);
        }
        switch (c) {
        case '"': s->in_str = 1; s->esc = 0; s->str_len = 0; break;
        case ':': s->value_of = key_of(s->str, s->str_len); break;
        case '[':
            s->depth++;
            if (s->value_of == K_IDS && s->ids_depth == IDS_NOT_YET) s->ids_depth = s->depth;
            s->value_of = K_NONE;
            break;
        case ']':
            if (s->depth == s->ids_depth) s->ids_depth = IDS_DONE;
            s->depth--;
            break;
        case '{': s->depth++; s->value_of = K_NONE; break;
        case '}': s->depth--; break;
        case ',': s->value_of = K_NONE; break;
        case 't':
            if (s->value_of == K_CONTINUOUS_USAGE) s->continuous_usage = 1;
            else if (s->value_of == K_INCLUDE_USAGE) s->include_usage = 1;
            s->value_of = K_NONE;
            break;
        case 'f':
            if (s->value_of == K_STREAM) s->stream_false = 1;
            s->value_of = K_NONE;
            break;
        default:
            if ((c >= '0' && c <= '9') || c == '-') {
                s->in_num = 1;
                s->num_int = c != '-';
                s->num = c == '-' ? 0 : c - '0';
                if (s->depth == s->ids_depth) s->ids++;
            }
        }
    }
}

/* ----------------------------------------------------------------------------------- requests and timers */

enum { KIND_SGLANG, KIND_OPENAI };
enum { END_RUNNING, END_DONE, END_DISCONNECT };

struct Conn;

/** One streamed request: its schedule, and what actually happened (kept until exit for the truth and stats). */
typedef struct Request {
    int kind;
    uint64_t seq;            /* arrival order: breaks ties between events due at the same tick */
    char *request_id;        /* the x-request-id header, or NULL */
    char *rid_json;          /* meta_info.id / the completion id, already a JSON string */
    int64_t received_ns;     /* whole request read */
    long long prompt_tokens;
    long long max_tokens;    /* completion tokens in all */
    long n_events;
    long sent;               /* events handed to send() */
    int64_t first_due_ns;
    int64_t *stamp_ns;       /* 0: not (fully) written */
    int continuous_usage, include_usage;
    int end;
    long slot;               /* --min-gap-us: the slot of the ITL period it holds, or -1 */
    int truth_written;
    struct Conn *conn;       /* NULL once the connection is gone */
} Request;

typedef struct {
    int64_t due_ns;
    uint64_t seq;
    Request *req;
} Timer;

static Timer *heap;
static size_t heap_len, heap_cap;

static int timer_before(const Timer *a, const Timer *b) {
    return a->due_ns < b->due_ns || (a->due_ns == b->due_ns && a->seq < b->seq);
}

static void heap_push(Timer t) {
    if (heap_len == heap_cap) {
        heap_cap = heap_cap ? heap_cap * 2 : 1024;
        heap = xrealloc(heap, heap_cap * sizeof *heap);
    }
    size_t i = heap_len++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!timer_before(&t, &heap[parent])) break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = t;
}

static Timer heap_pop(void) {
    Timer top = heap[0];
    Timer last = heap[--heap_len];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= heap_len) break;
        if (child + 1 < heap_len && timer_before(&heap[child + 1], &heap[child])) child++;
        if (!timer_before(&heap[child], &last)) break;
        heap[i] = heap[child];
        i = child;
    }
    if (heap_len > 0) heap[i] = last;
    return top;
}

static Request **requests;
static size_t n_requests, requests_cap;

/* -------------------------------------------------------------------------------------------- global state */

static struct {
    long long generate_requests, completions_requests, other_requests;
    long long in_flight, max_in_flight;
    long long events, partial_writes, disconnects;
    long long prompt_tokens, generation_tokens;
    int64_t send_ns_total, send_ns_max;
} stats;

static int epfd = -1, listen_fd = -1, signal_fd = -1, truth_fd = -1;
static int listen_port;
static int rt_active;
static int64_t start_ns, itl_ns, ttft_ns, spin_ns;
static int *slot_count;  /* --min-gap-us: streams holding each slot of the ITL period */
static long n_slots;
static long *slots_held; /* slots_held[c]: how many slots c streams hold (so the least-held count is O(1)) */
static int slots_held_cap, least_held;

static void count_slot(long slot, int delta) {
    int from = slot_count[slot], to = from + delta;
    if (to >= slots_held_cap) {
        slots_held = xrealloc(slots_held, (size_t)(2 * to + 2) * sizeof *slots_held);
        memset(slots_held + slots_held_cap, 0, (size_t)(2 * to + 2 - slots_held_cap) * sizeof *slots_held);
        slots_held_cap = 2 * to + 2;
    }
    slot_count[slot] = to;
    slots_held[from]--;
    slots_held[to]++;
    if (to < least_held) least_held = to;
    while (slots_held[least_held] == 0) least_held++;
}
static Buf scratch; /* one event or reply at a time */

/* ------------------------------------------------------------------------------------------- connections */

enum { C_HEAD, C_BODY, C_STREAM };

typedef struct Conn {
    int fd;
    int state;
    int closed;
    Buf in;                  /* header bytes, then anything sent after the current request */
    Buf out;                 /* bytes send() did not take yet, from out_off */
    size_t out_off;
    int want_out;            /* EPOLLOUT registered */
    int close_after;         /* Connection: close (or HTTP/1.0): close once the response is out */
    int expect_continue;     /* Expect: 100-continue (curl's, for bodies over 1 MB) */
    char method[8];
    char path[256];
    char query[256];
    char request_id[129];
    int has_request_id;
    long long body_left;
    int scan_body;
    Scanner sc;
    Request *req;            /* the running stream */
    Request *unstamped_req;  /* events queued in `out`, stamped when it drains */
    long unstamped_from;
    struct Conn *next_dead;
} Conn;

static Conn *dead_conns; /* closed during this batch of epoll events; freed after it */

static void conn_close(Conn *c);
static void conn_feed(Conn *c);

static void epoll_set(Conn *c, int mod) {
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (c->want_out ? EPOLLOUT : 0), .data.ptr = c};
    if (epoll_ctl(epfd, mod ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &ev) != 0) die("epoll_ctl: %s", strerror(errno));
}

static void stamp_pending(Conn *c, int64_t stamp) {
    Request *r = c->unstamped_req;
    if (!r) return;
    for (long k = c->unstamped_from; k < r->sent; k++) r->stamp_ns[k] = stamp;
    c->unstamped_req = NULL;
}

/**
 * Sends `data` with one send(). Returns 1 when all of it left; otherwise keeps the rest for EPOLLOUT
 * (a reader that fell behind) and returns 0. A dead socket closes the connection.
 */
static int conn_send(Conn *c, const char *data, size_t len) {
    if (c->closed) return 0;
    if (c->out.len > c->out_off) {
        buf_put(&c->out, data, len);
        return 0;
    }
    ssize_t w = send(c->fd, data, len, MSG_NOSIGNAL);
    if (w == (ssize_t)len) return 1;
    if (w < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            conn_close(c);
            return 0;
        }
        w = 0;
    }
    stats.partial_writes++;
    c->out.len = 0;
    c->out_off = 0;
    buf_put(&c->out, data + w, len - (size_t)w);
    c->want_out = 1;
    epoll_set(c, 1);
    return 0;
}

/** A whole non-streamed reply. */
static void reply(Conn *c, int status, const char *reason, const char *content_type, const char *body, size_t len) {
    Buf *b = &scratch;
    b->len = 0;
    buf_fmt(b, "HTTP/1.1 %d %s\r\ncontent-type: %s\r\ncontent-length: %zu\r\n%s\r\n", status, reason, content_type, len,
            c->close_after ? "connection: close\r\n" : "");
    buf_put(b, body, len);
    if (conn_send(c, b->p, b->len) && c->close_after) conn_close(c);
}

static void reply_json(Conn *c, int status, const char *reason, const Buf *json) {
    reply(c, status, reason, "application/json", json->p, json->len);
}

static void reply_json_lit(Conn *c, int status, const char *reason, const char *json) {
    reply(c, status, reason, "application/json", json, strlen(json));
}

/* ------------------------------------------------------------------------------------------------ events */

/* The mock's output tokens (src/mock/output.ts): id = (1000 + 7i) % vocab, text = WORDS[id % 8]. */
static const char *const WORDS[8] = {" the", " cat", " sat", " on", " caf\xc3\xa9", " \xe7\x8c\xab", " mat", " \xf0\x9f\x99\x82"};

static long long tokens_at(const Request *r, long k) {
    long long t = (long long)(k + 1) * opt.tokens_per_event;
    return t < r->max_tokens ? t : r->max_tokens;
}

static void put_words(Buf *b, long long from, long long to) {
    for (long long i = from; i < to; i++) buf_str(b, WORDS[((1000 + i * 7) % opt.vocab_size) % 8]);
}

static void put_ids(Buf *b, long long from, long long to) {
    for (long long i = from; i < to; i++) {
        if (i > from) buf_put(b, ",", 1);
        buf_i64(b, (1000 + i * 7) % opt.vocab_size);
    }
}

/** The SSE event(s) of event k: SGLang's incremental-text event, or an OpenAI completion chunk. */
static void build_event(Buf *b, const Request *r, long k) {
    long long prev = k > 0 ? tokens_at(r, k - 1) : 0;
    long long tokens = tokens_at(r, k);
    int last = k == r->n_events - 1;
    if (r->kind == KIND_SGLANG) {
        BUF_LIT(b, "data: {\"text\":\"");
        put_words(b, prev, tokens);
        BUF_LIT(b, "\",\"output_ids\":[");
        put_ids(b, prev, tokens);
        BUF_LIT(b, "],\"meta_info\":{\"id\":");
        buf_str(b, r->rid_json);
        BUF_LIT(b, ",\"finish_reason\":");
        if (last) {
            BUF_LIT(b, "{\"type\":\"length\",\"length\":");
            buf_i64(b, tokens);
            BUF_LIT(b, "}");
        } else {
            BUF_LIT(b, "null");
        }
        BUF_LIT(b, ",\"prompt_tokens\":");
        buf_i64(b, r->prompt_tokens);
        BUF_LIT(b, ",\"weight_version\":\"default\",\"num_retractions\":0,\"reasoning_tokens\":0,\"completion_tokens\":");
        buf_i64(b, tokens);
        BUF_LIT(b, ",\"cached_tokens\":0,\"cached_tokens_details\":null");
        if (last) buf_fmt(b, ",\"e2e_latency\":%.6f", (double)(now_ns() - r->received_ns) / 1e9);
        if (k == 0) buf_fmt(b, ",\"response_sent_to_client_ts\":%.6f", (double)now_ns() / 1e9);
        BUF_LIT(b, "}}\n\n");
    } else {
        long long created = r->received_ns / 1000000000LL;
        BUF_LIT(b, "data: {\"id\":");
        buf_str(b, r->rid_json);
        BUF_LIT(b, ",\"object\":\"text_completion\",\"created\":");
        buf_i64(b, created);
        BUF_LIT(b, ",\"model\":");
        buf_json_str(b, opt.model_name);
        BUF_LIT(b, ",\"choices\":[{\"index\":0,\"text\":\"");
        put_words(b, prev, tokens);
        BUF_LIT(b, "\",\"logprobs\":null,\"finish_reason\":");
        if (last) BUF_LIT(b, "\"length\"");
        else BUF_LIT(b, "null");
        BUF_LIT(b, ",\"stop_reason\":null}]");
        if (r->continuous_usage) {
            buf_fmt(b, ",\"usage\":{\"prompt_tokens\":%lld,\"total_tokens\":%lld,\"completion_tokens\":%lld}",
                    r->prompt_tokens, r->prompt_tokens + tokens, tokens);
        }
        BUF_LIT(b, "}\n\n");
        if (last && r->include_usage) {
            BUF_LIT(b, "data: {\"id\":");
            buf_str(b, r->rid_json);
            BUF_LIT(b, ",\"object\":\"text_completion\",\"created\":");
            buf_i64(b, created);
            BUF_LIT(b, ",\"model\":");
            buf_json_str(b, opt.model_name);
            buf_fmt(b,
                    ",\"choices\":[],\"usage\":{\"prompt_tokens\":%lld,\"total_tokens\":%lld,\"completion_tokens\":%lld,"
                    "\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\n",
                    r->prompt_tokens, r->prompt_tokens + tokens, tokens);
        }
    }
    if (last) BUF_LIT(b, "data: [DONE]\n\n");
}

static void request_ended(Request *r, int how) {
    if (r->end != END_RUNNING) return;
    r->end = how;
    if (r->slot >= 0) count_slot(r->slot, -1);
    r->slot = -1;
    stats.in_flight--;
    if (how == END_DISCONNECT) stats.disconnects++;
}

/** Writes event k of `r` as one HTTP chunk (the last one also ends the body) in one send(), then stamps it. */
static void fire(Request *r) {
    Conn *c = r->conn;
    long k = r->sent;
    int last = k == r->n_events - 1;
    enum { HEAD_ROOM = 16 };
    Buf *b = &scratch;
    b->len = HEAD_ROOM; /* the chunk-size line goes in front once the payload's length is known */
    buf_reserve(b, 0);
    build_event(b, r, k);
    size_t payload = b->len - HEAD_ROOM;
    char size_line[HEAD_ROOM];
    int n = snprintf(size_line, sizeof size_line, "%zx\r\n", payload);
    memcpy(b->p + HEAD_ROOM - n, size_line, (size_t)n);
    if (last) BUF_LIT(b, "\r\n0\r\n\r\n");
    else BUF_LIT(b, "\r\n");

    int64_t before = now_ns();
    int whole = conn_send(c, b->p + HEAD_ROOM - n, b->len - HEAD_ROOM + (size_t)n);
    int64_t stamp = now_ns();
    int64_t took = stamp - before;
    stats.send_ns_total += took;
    if (took > stats.send_ns_max) stats.send_ns_max = took;
    r->sent++;
    stats.events++;
    stats.generation_tokens += tokens_at(r, k) - (k > 0 ? tokens_at(r, k - 1) : 0);
    if (c->closed) {
        request_ended(r, END_DISCONNECT);
        return;
    }
    if (whole) {
        r->stamp_ns[k] = stamp;
    } else if (!c->unstamped_req) {
        c->unstamped_req = r;
        c->unstamped_from = k;
    }
    if (!last) {
        heap_push((Timer){r->first_due_ns + (int64_t)(k + 1) * itl_ns, r->seq, r});
        return;
    }
    request_ended(r, END_DONE);
    c->req = NULL;
    c->state = C_HEAD;
    if (c->close_after) {
        if (whole) conn_close(c);
        return;
    }
    if (c->in.len > 0) conn_feed(c); /* a request pipelined behind this one */
}

/** Fires every event that is due; the clock is read again after each, since each write takes time. */
static void fire_due(void) {
    while (heap_len > 0) {
        if (heap[0].req->end != END_RUNNING) {
            heap_pop();
            continue;
        }
        if (heap[0].due_ns > now_ns()) return;
        fire(heap_pop().req);
    }
}

/* ----------------------------------------------------------------------------------------------- streams */

/* Slot j's offset from the start of its ITL period; j may run past n_slots into the next period. */
static int64_t slot_offset(long j) { return (int64_t)(j / n_slots) * itl_ns + (int64_t)(j % n_slots) * itl_ns / n_slots; }

/*
 * --min-gap-us: the ITL period is cut into slots at least that far apart, and each running stream holds one, so
 * no two streams' events are due closer than the gap unless every slot is taken (then the least-held slots are
 * shared). A stream's first event moves to the first least-held slot at or after receipt + TTFT: at most one
 * ITL later, a few gaps when the slots are not crowded. Without it, requests that arrive together keep their
 * events due together for their whole life, and each waits for the writes before it.
 */
static int64_t take_slot(Request *r, int64_t desired) {
    int64_t since = desired - start_ns;
    int64_t period_start = start_ns + since / itl_ns * itl_ns;
    long j = (long)((since % itl_ns * n_slots + itl_ns - 1) / itl_ns); /* the first slot at or after `desired` */
    while (slot_count[j % n_slots] != least_held) j++;
    r->slot = j % n_slots;
    count_slot(r->slot, +1);
    return period_start + slot_offset(j);
}

static char *json_string_dup(const char *s) {
    Buf b = {0};
    buf_json_str(&b, s);
    buf_put(&b, "", 1);
    return b.p;
}

static void start_stream(Conn *c, int kind) {
    Scanner *s = &c->sc;
    if (s->stream_false) {
        reply_json_lit(c, 400, "Bad Request", "{\"error\":{\"message\":\"the emitter only streams: send \\\"stream\\\": true\"}}");
        return;
    }
    long long body_max = kind == KIND_SGLANG ? s->max_new_tokens : s->max_tokens;
    long long max_tokens = opt.events > 0 ? (long long)opt.events * opt.tokens_per_event
                           : body_max >= 0 ? body_max
                           : kind == KIND_SGLANG ? DEFAULT_MAX_NEW_TOKENS : DEFAULT_MAX_TOKENS;
    Request *r = xrealloc(NULL, sizeof *r);
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->seq = n_requests;
    r->received_ns = now_ns();
    r->request_id = c->has_request_id ? strdup(c->request_id) : NULL;
    char rid[64];
    if (kind == KIND_SGLANG) snprintf(rid, sizeof rid, "%016llx%016llx", (unsigned long long)start_ns, (unsigned long long)r->seq);
    else if (r->request_id) snprintf(rid, sizeof rid, "cmpl-%.58s", r->request_id);
    else snprintf(rid, sizeof rid, "cmpl-%016llx%016llx", (unsigned long long)start_ns, (unsigned long long)r->seq);
    r->rid_json = json_string_dup(rid);
    r->prompt_tokens = s->ids;
    r->max_tokens = max_tokens;
    r->n_events = max_tokens == 0 ? 1 : (long)((max_tokens + opt.tokens_per_event - 1) / opt.tokens_per_event);
    r->stamp_ns = xrealloc(NULL, (size_t)r->n_events * sizeof *r->stamp_ns);
    memset(r->stamp_ns, 0, (size_t)r->n_events * sizeof *r->stamp_ns);
    r->continuous_usage = s->continuous_usage;
    r->include_usage = s->include_usage;
    r->conn = c;
    r->slot = -1;
    int64_t first = r->received_ns + ttft_ns;
    if (opt.sync) {
        /* The first decode step at or after receipt + TTFT: every stream's k-th event shares a tick. */
        int64_t steps = (first - start_ns + itl_ns - 1) / itl_ns;
        first = start_ns + steps * itl_ns;
    } else if (n_slots > 0) {
        first = take_slot(r, first);
    }
    r->first_due_ns = first;
    if (n_requests == requests_cap) {
        requests_cap = requests_cap ? requests_cap * 2 : 1024;
        requests = xrealloc(requests, requests_cap * sizeof *requests);
    }
    requests[n_requests++] = r;
    stats.prompt_tokens += r->prompt_tokens;
    if (++stats.in_flight > stats.max_in_flight) stats.max_in_flight = stats.in_flight;

    c->req = r;
    c->state = C_STREAM;
    /* SGLang sends the 200 and its headers long before the first token; clients must not take them for TTFT. */
    static const char head[] = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ntransfer-encoding: chunked\r\n\r\n";
    conn_send(c, head, sizeof head - 1);
    if (c->closed) {
        request_ended(r, END_DISCONNECT);
        return;
    }
    heap_push((Timer){r->first_due_ns, r->seq, r});
}

/* ------------------------------------------------------------------------------------------------- stats */

typedef struct {
    long long count;
    double p50, p99, max;
} Spread;

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/** numpy.percentile's linear interpolation on a sorted array. */
static double percentile(const double *v, size_t n, double p) {
    if (n == 0) return NAN;
    double rank = p / 100 * (double)(n - 1);
    size_t lo = (size_t)rank;
    size_t hi = lo + 1 < n ? lo + 1 : n - 1;
    return v[lo] + (v[hi] - v[lo]) * (rank - (double)lo);
}

static Spread spread_of(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return (Spread){(long long)n, percentile(v, n, 50), percentile(v, n, 99), n ? v[n - 1] : NAN};
}

static void buf_spread(Buf *b, const Spread *s) {
    buf_fmt(b, "{\"count\":%lld,\"p50\":", s->count);
    buf_num(b, s->p50, 4);
    BUF_LIT(b, ",\"p99\":");
    buf_num(b, s->p99, 4);
    BUF_LIT(b, ",\"max\":");
    buf_num(b, s->max, 4);
    BUF_LIT(b, "}");
}

static int64_t due_of(const Request *r, long k) { return r->first_due_ns + (int64_t)k * itl_ns; }

typedef struct {
    int64_t due_ns, stamp_ns;
} Written;

static int cmp_written(const void *a, const void *b) {
    const Written *x = a, *y = b;
    if (x->due_ns != y->due_ns) return x->due_ns < y->due_ns ? -1 : 1;
    return x->stamp_ns < y->stamp_ns ? -1 : x->stamp_ns > y->stamp_ns;
}

/**
 * --sync: a tick's events are written one after another, so an event's lateness is mostly its place in the
 * burst. What the clock itself does shows in the first write of each tick (tick lateness); the burst is the
 * time from that first write to the tick's last (ms).
 */
static void sync_spreads(size_t total, Spread *tick, Spread *burst) {
    Written *w = xrealloc(NULL, (total + 1) * sizeof *w);
    size_t n = 0;
    for (size_t i = 0; i < n_requests; i++) {
        const Request *r = requests[i];
        for (long k = 0; k < r->sent; k++)
            if (r->stamp_ns[k]) w[n++] = (Written){due_of(r, k), r->stamp_ns[k]};
    }
    qsort(w, n, sizeof *w, cmp_written);
    double *first = xrealloc(NULL, (n + 1) * sizeof *first);
    double *spread = xrealloc(NULL, (n + 1) * sizeof *spread);
    size_t ticks = 0;
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && w[j + 1].due_ns == w[i].due_ns) j++;
        first[ticks] = (double)(w[i].stamp_ns - w[i].due_ns) / 1e6;
        spread[ticks++] = (double)(w[j].stamp_ns - w[i].stamp_ns) / 1e6;
        i = j + 1;
    }
    *tick = spread_of(first, ticks);
    *burst = spread_of(spread, ticks);
    free(w);
    free(first);
    free(spread);
}

/**
 * Lateness (stamp - due, ms) of every written event, and of the steady state: the events written after the
 * last finished stream's first event and before the first finished stream's last one (bench/lib/join.ts's
 * window: every stream flowing, no connection storm, no tails).
 */
static void build_stats(Buf *b) {
    int64_t from = INT64_MIN, to = INT64_MAX;
    size_t total = 0;
    for (size_t i = 0; i < n_requests; i++) {
        const Request *r = requests[i];
        total += (size_t)r->sent;
        if (r->end != END_DONE || r->stamp_ns[0] == 0 || r->stamp_ns[r->n_events - 1] == 0) continue;
        if (r->stamp_ns[0] > from) from = r->stamp_ns[0];
        if (r->stamp_ns[r->n_events - 1] < to) to = r->stamp_ns[r->n_events - 1];
    }
    double *all = xrealloc(NULL, (total + 1) * sizeof *all);
    double *steady = xrealloc(NULL, (total + 1) * sizeof *steady);
    size_t n_all = 0, n_steady = 0;
    for (size_t i = 0; i < n_requests; i++) {
        const Request *r = requests[i];
        for (long k = 0; k < r->sent; k++) {
            int64_t stamp = r->stamp_ns[k];
            if (stamp == 0) continue;
            double late_ms = (double)(stamp - due_of(r, k)) / 1e6;
            all[n_all++] = late_ms;
            if (r->end == END_DONE && stamp > from && stamp < to) steady[n_steady++] = late_ms;
        }
    }
    Spread sa = spread_of(all, n_all), ss = spread_of(steady, n_steady);
    free(all);
    free(steady);
    Spread tick = {0, NAN, NAN, NAN}, burst = {0, NAN, NAN, NAN};
    if (opt.sync) sync_spreads(total, &tick, &burst);
    buf_fmt(b,
            "{\"generate_requests\":%lld,\"completions_requests\":%lld,\"other_requests\":%lld,\"in_flight\":%lld,"
            "\"max_in_flight\":%lld,\"disconnects\":%lld,\"events\":%lld,\"partial_writes\":%lld,\"lateness_ms\":",
            stats.generate_requests, stats.completions_requests, stats.other_requests, stats.in_flight,
            stats.max_in_flight, stats.disconnects, stats.events, stats.partial_writes);
    buf_spread(b, &sa);
    BUF_LIT(b, ",\"steady_lateness_ms\":");
    buf_spread(b, &ss);
    BUF_LIT(b, ",\"steady_from_ms\":");
    if (n_steady) buf_epoch_ms(b, from);
    else BUF_LIT(b, "null");
    BUF_LIT(b, ",\"steady_to_ms\":");
    if (n_steady) buf_epoch_ms(b, to);
    else BUF_LIT(b, "null");
    BUF_LIT(b, ",\"send_us_mean\":");
    buf_num(b, stats.events ? (double)stats.send_ns_total / (double)stats.events / 1e3 : NAN, 2);
    BUF_LIT(b, ",\"send_us_max\":");
    buf_num(b, stats.events ? (double)stats.send_ns_max / 1e3 : NAN, 2);
    if (opt.sync) {
        BUF_LIT(b, ",\"tick_lateness_ms\":");
        buf_spread(b, &tick);
        BUF_LIT(b, ",\"burst_ms\":");
        buf_spread(b, &burst);
    }
    buf_fmt(b, ",\"ttft_ms\":%g,\"itl_ms\":%g,\"events_per_request\":%ld,\"tokens_per_event\":%ld,\"sync\":%s,"
               "\"min_gap_us\":%g,\"spin_us\":%g,\"rt\":%s}",
            opt.ttft_ms, opt.itl_ms, opt.events, opt.tokens_per_event, opt.sync ? "true" : "false", opt.min_gap_us, opt.spin_us,
            rt_active ? "true" : "false");
}

/* ------------------------------------------------------------------------------------------------- truth */

/** Appends the lines of every ended request not yet written (src/mock/truth.ts's format, plus events_due_ms). */
static void write_truth(void) {
    if (truth_fd < 0) return;
    Buf b = {0};
    for (size_t i = 0; i < n_requests; i++) {
        Request *r = requests[i];
        if (r->end == END_RUNNING || r->truth_written) continue;
        r->truth_written = 1;
        long long completion = 0;
        for (long k = 0; k < r->sent; k++) if (r->stamp_ns[k]) completion = tokens_at(r, k);
        BUF_LIT(&b, "{\"request_id\":");
        if (r->request_id) buf_json_str(&b, r->request_id);
        else BUF_LIT(&b, "null");
        BUF_LIT(&b, ",\"rid\":");
        buf_str(&b, r->rid_json);
        BUF_LIT(&b, ",\"received_ms\":");
        buf_epoch_ms(&b, r->received_ns);
        buf_fmt(&b, ",\"prompt_tokens\":%lld,\"cached_tokens\":0,\"completion_tokens\":%lld,\"events_ms\":[", r->prompt_tokens, completion);
        int first = 1;
        for (long k = 0; k < r->sent; k++) {
            if (!r->stamp_ns[k]) continue;
            if (!first) buf_put(&b, ",", 1);
            first = 0;
            buf_epoch_ms(&b, r->stamp_ns[k]);
        }
        BUF_LIT(&b, "],\"events_tokens\":[");
        first = 1;
        for (long k = 0; k < r->sent; k++) {
            if (!r->stamp_ns[k]) continue;
            if (!first) buf_put(&b, ",", 1);
            first = 0;
            buf_i64(&b, tokens_at(r, k));
        }
        BUF_LIT(&b, "],\"events_due_ms\":[");
        first = 1;
        for (long k = 0; k < r->sent; k++) {
            if (!r->stamp_ns[k]) continue;
            if (!first) buf_put(&b, ",", 1);
            first = 0;
            buf_epoch_ms(&b, due_of(r, k));
        }
        buf_fmt(&b, "],\"end\":\"%s\"}\n", r->end == END_DONE ? "done" : "disconnect");
    }
    for (size_t off = 0; off < b.len;) {
        ssize_t w = write(truth_fd, b.p + off, b.len - off);
        if (w < 0) {
            if (errno == EINTR) continue;
            die("writing the truth log: %s", strerror(errno));
        }
        off += (size_t)w;
    }
    free(b.p);
}

/* ------------------------------------------------------------------------------------------------ routes */

static void reply_server_info(Conn *c) {
    Buf b = {0};
    BUF_LIT(&b, "{\"model_path\":");
    buf_json_str(&b, opt.model_name);
    BUF_LIT(&b, ",\"tokenizer_path\":");
    buf_json_str(&b, opt.model_name);
    BUF_LIT(&b, ",\"served_model_name\":");
    buf_json_str(&b, opt.model_name);
    BUF_LIT(&b, ",\"host\":");
    buf_json_str(&b, opt.host);
    buf_fmt(&b,
            ",\"port\":%d,\"context_length\":131072,\"page_size\":1,\"max_running_requests\":1000000,\"stream_interval\":1,"
            "\"incremental_streaming_output\":true,\"disable_radix_cache\":true,\"enable_cache_report\":false,"
            "\"enable_metrics\":true,\"skip_tokenizer_init\":false,\"weight_version\":\"default\",\"max_total_num_tokens\":4000000,"
            "\"max_req_input_len\":131071,\"version\":\"0.5.17-emitter\",\"status\":\"ready\",\"startup_time\":%.6f,"
            "\"emitter\":{\"ttft_ms\":%g,\"itl_ms\":%g,\"events_per_request\":%ld,\"tokens_per_event\":%ld,\"sync\":%s}}",
            listen_port, (double)start_ns / 1e9, opt.ttft_ms, opt.itl_ms, opt.events, opt.tokens_per_event,
            opt.sync ? "true" : "false");
    reply_json(c, 200, "OK", &b);
    free(b.p);
}

static void reply_model_info(Conn *c) {
    Buf b = {0};
    BUF_LIT(&b, "{\"model_path\":");
    buf_json_str(&b, opt.model_name);
    BUF_LIT(&b, ",\"tokenizer_path\":");
    buf_json_str(&b, opt.model_name);
    BUF_LIT(&b, ",\"is_generation\":true,\"preferred_sampling_params\":null,\"weight_version\":\"default\","
                "\"has_image_understanding\":false,\"has_audio_understanding\":false,\"model_type\":\"emitter\","
                "\"architectures\":[\"EmitterForCausalLM\"]}");
    reply_json(c, 200, "OK", &b);
    free(b.p);
}

static void reply_models(Conn *c) {
    Buf b = {0};
    BUF_LIT(&b, "{\"object\":\"list\",\"data\":[{\"id\":");
    buf_json_str(&b, opt.model_name);
    buf_fmt(&b, ",\"object\":\"model\",\"created\":%lld,\"owned_by\":\"sglang\",\"root\":", (long long)(start_ns / 1000000000LL));
    buf_json_str(&b, opt.model_name);
    BUF_LIT(&b, ",\"parent\":null,\"max_model_len\":131072}]}");
    reply_json(c, 200, "OK", &b);
    free(b.p);
}

static void reply_metrics(Conn *c) {
    Buf b = {0};
    const char *model = opt.model_name;
    buf_fmt(&b,
            "# TYPE sglang:prompt_tokens_total counter\nsglang:prompt_tokens_total{model_name=\"%s\"} %lld.0\n"
            "# TYPE sglang:generation_tokens_total counter\nsglang:generation_tokens_total{model_name=\"%s\"} %lld.0\n"
            "# TYPE sglang:cached_tokens_total counter\nsglang:cached_tokens_total{cache_source=\"device\",model_name=\"%s\"} 0.0\n"
            "# TYPE sglang:num_running_reqs gauge\nsglang:num_running_reqs{model_name=\"%s\"} %lld.0\n",
            model, stats.prompt_tokens, model, stats.generation_tokens, model, model, stats.in_flight);
    reply(c, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", b.p, b.len);
    free(b.p);
}

static int method_is(const Conn *c, const char *a, const char *b) {
    return strcmp(c->method, a) == 0 || (b && strcmp(c->method, b) == 0);
}

static void dispatch(Conn *c) {
    const char *p = c->path;
    static const char not_allowed[] = "{\"detail\":\"Method Not Allowed\"}";
    if (strcmp(p, "/generate") == 0) {
        if (!method_is(c, "POST", "PUT")) reply_json_lit(c, 405, "Method Not Allowed", not_allowed);
        else {
            stats.generate_requests++;
            start_stream(c, KIND_SGLANG);
        }
        return;
    }
    if (strcmp(p, "/v1/completions") == 0) {
        if (!method_is(c, "POST", NULL)) reply_json_lit(c, 405, "Method Not Allowed", not_allowed);
        else {
            stats.completions_requests++;
            start_stream(c, KIND_OPENAI);
        }
        return;
    }
    stats.other_requests++;
    if (strcmp(p, "/flush_cache") == 0) {
        static const char ok[] = "Cache flushed.\nPlease check backend logs for more details. (When there are running or "
                                 "waiting requests, the operation will not be performed.)\n";
        static const char busy[] = "Flush cache failed.\n";
        if (!method_is(c, "GET", "POST")) reply_json_lit(c, 405, "Method Not Allowed", not_allowed);
        else if (stats.in_flight == 0) reply(c, 200, "OK", "text/plain; charset=utf-8", ok, sizeof ok - 1);
        else reply(c, 400, "Bad Request", "text/plain; charset=utf-8", busy, sizeof busy - 1);
    } else if (strcmp(p, "/reset_prefix_cache") == 0) {
        if (!method_is(c, "POST", NULL)) reply_json_lit(c, 405, "Method Not Allowed", not_allowed);
        else reply_json_lit(c, 200, "OK", stats.in_flight == 0 ? "{\"success\":true}" : "{\"success\":false}");
    } else if (strcmp(p, "/health") == 0 || strcmp(p, "/health_generate") == 0) {
        if (!method_is(c, "GET", NULL)) reply_json_lit(c, 405, "Method Not Allowed", not_allowed);
        else reply(c, 200, "OK", "text/plain", "", 0);
    } else if (strcmp(p, "/server_info") == 0 || strcmp(p, "/get_server_info") == 0) {
        if (!method_is(c, "GET", NULL)) reply_json_lit(c, 405, "Method Not Allowed", not_allowed);
        else reply_server_info(c);
    } else if (strcmp(p, "/model_info") == 0 || strcmp(p, "/get_model_info") == 0) {
        if (!method_is(c, "GET", NULL)) reply_json_lit(c, 405, "Method Not Allowed", not_allowed);
        else reply_model_info(c);
    } else if (strcmp(p, "/v1/models") == 0) {
        if (!method_is(c, "GET", NULL)) reply_json_lit(c, 405, "Method Not Allowed", not_allowed);
        else reply_models(c);
    } else if (strcmp(p, "/metrics") == 0) {
        if (!method_is(c, "GET", NULL)) reply_json_lit(c, 405, "Method Not Allowed", not_allowed);
        else reply_metrics(c);
    } else if (strcmp(p, "/emitter/stats") == 0) {
        if (!method_is(c, "GET", NULL)) reply_json_lit(c, 405, "Method Not Allowed", not_allowed);
        else {
            Buf b = {0};
            build_stats(&b);
            reply_json(c, 200, "OK", &b);
            free(b.p);
        }
    } else {
        reply_json_lit(c, 404, "Not Found", "{\"detail\":\"Not Found\"}");
    }
}

/* -------------------------------------------------------------------------------------------------- HTTP */

static void copy_field(char *dst, size_t cap, const char *src, size_t len) {
    if (len >= cap) len = cap - 1;
    memcpy(dst, src, len);
    dst[len] = 0;
}

/** Parses the request line and headers (`len` bytes, up to and including the blank line); 0 when malformed. */
static int parse_head(Conn *c, const char *p, size_t len) {
    const char *end = p + len;
    const char *eol = memmem(p, len, "\r\n", 2);
    const char *sp1 = memchr(p, ' ', (size_t)(eol - p));
    if (!sp1) return 0;
    const char *sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1));
    if (!sp2) return 0;
    copy_field(c->method, sizeof c->method, p, (size_t)(sp1 - p));
    const char *target = sp1 + 1;
    const char *q = memchr(target, '?', (size_t)(sp2 - target));
    copy_field(c->path, sizeof c->path, target, (size_t)((q ? q : sp2) - target));
    if (q) copy_field(c->query, sizeof c->query, q + 1, (size_t)(sp2 - q - 1));
    else c->query[0] = 0;
    int http10 = (size_t)(eol - sp2 - 1) >= 8 && memcmp(sp2 + 1, "HTTP/1.0", 8) == 0;
    int keep_alive = 0, close = 0;
    c->body_left = 0;
    c->expect_continue = 0;
    c->has_request_id = 0;
    for (const char *line = eol + 2; line < end;) {
        const char *next = memmem(line, (size_t)(end - line), "\r\n", 2);
        if (!next || next == line) break;
        const char *colon = memchr(line, ':', (size_t)(next - line));
        if (colon) {
            size_t name_len = (size_t)(colon - line);
            const char *v = colon + 1;
            while (v < next && (*v == ' ' || *v == '\t')) v++;
            size_t v_len = (size_t)(next - v);
            while (v_len > 0 && (v[v_len - 1] == ' ' || v[v_len - 1] == '\t')) v_len--;
#define NAME_IS(lit) (name_len == sizeof(lit) - 1 && strncasecmp(line, lit, sizeof(lit) - 1) == 0)
            if (NAME_IS("content-length")) {
                char num[24];
                copy_field(num, sizeof num, v, v_len);
                char *stop;
                c->body_left = strtoll(num, &stop, 10);
                if (*stop || c->body_left < 0) return 0;
            } else if (NAME_IS("transfer-encoding")) {
                return 0; /* chunked request bodies: not needed by any client of this server */
            } else if (NAME_IS("x-request-id")) {
                copy_field(c->request_id, sizeof c->request_id, v, v_len);
                c->has_request_id = 1;
            } else if (NAME_IS("expect")) {
                c->expect_continue = v_len == 12 && strncasecmp(v, "100-continue", 12) == 0;
            } else if (NAME_IS("connection")) {
                if (v_len == 5 && strncasecmp(v, "close", 5) == 0) close = 1;
                if (v_len == 10 && strncasecmp(v, "keep-alive", 10) == 0) keep_alive = 1;
            }
#undef NAME_IS
        }
        line = next + 2;
    }
    c->close_after = close || (http10 && !keep_alive);
    return 1;
}

/** Runs the connection's state machine over the bytes buffered in `in`. */
static void conn_feed(Conn *c) {
    while (!c->closed) {
        if (c->state == C_STREAM) return; /* anything further waits for the stream's end */
        if (c->state == C_HEAD) {
            char *head_end = memmem(c->in.p, c->in.len, "\r\n\r\n", 4);
            if (!head_end) {
                if (c->in.len > MAX_HEAD_BYTES) {
                    c->close_after = 1;
                    reply_json_lit(c, 431, "Request Header Fields Too Large", "{\"detail\":\"headers too large\"}");
                }
                return;
            }
            size_t head_len = (size_t)(head_end - c->in.p) + 4;
            if (!parse_head(c, c->in.p, head_len)) {
                c->close_after = 1;
                reply_json_lit(c, 400, "Bad Request", "{\"detail\":\"malformed or unsupported request head\"}");
                return;
            }
            memmove(c->in.p, c->in.p + head_len, c->in.len - head_len);
            c->in.len -= head_len;
            c->state = C_BODY;
            c->scan_body = strcmp(c->path, "/generate") == 0 || strcmp(c->path, "/v1/completions") == 0;
            scanner_reset(&c->sc);
            if (c->expect_continue && c->body_left > 0) {
                static const char go_on[] = "HTTP/1.1 100 Continue\r\n\r\n";
                conn_send(c, go_on, sizeof go_on - 1);
                if (c->closed) return;
            }
        }
        size_t take = c->in.len < (size_t)c->body_left ? c->in.len : (size_t)c->body_left;
        if (take > 0) {
            if (c->scan_body) scan(&c->sc, c->in.p, take);
            memmove(c->in.p, c->in.p + take, c->in.len - take);
            c->in.len -= take;
            c->body_left -= (long long)take;
        }
        if (c->body_left > 0) return;
        c->state = C_HEAD;
        dispatch(c);
    }
}

static void conn_close(Conn *c) {
    if (c->closed) return;
    c->closed = 1;
    if (c->req) {
        c->req->conn = NULL;
        request_ended(c->req, END_DISCONNECT);
        c->req = NULL;
    }
    epoll_ctl(epfd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    c->next_dead = dead_conns;
    dead_conns = c;
}

static void free_dead_conns(void) {
    while (dead_conns) {
        Conn *c = dead_conns;
        dead_conns = c->next_dead;
        free(c->in.p);
        free(c->out.p);
        free(c);
    }
}

static void on_readable(Conn *c) {
    buf_reserve(&c->in, READ_CHUNK);
    ssize_t r = recv(c->fd, c->in.p + c->in.len, READ_CHUNK, 0);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        conn_close(c);
        return;
    }
    if (r < 0) return;
    c->in.len += (size_t)r;
    if (c->state == C_STREAM && c->in.len > MAX_BUFFERED_BYTES) {
        conn_close(c); /* a client that pipelines megabytes behind a running stream */
        return;
    }
    conn_feed(c);
}

static void on_writable(Conn *c) {
    while (c->out.len > c->out_off) {
        ssize_t w = send(c->fd, c->out.p + c->out_off, c->out.len - c->out_off, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            conn_close(c);
            return;
        }
        c->out_off += (size_t)w;
    }
    stamp_pending(c, now_ns());
    c->out.len = 0;
    c->out_off = 0;
    c->want_out = 0;
    epoll_set(c, 1);
    if (c->close_after && c->state != C_STREAM) conn_close(c);
}

static void on_listener(void) {
    for (int i = 0; i < ACCEPTS_PER_WAKE; i++) {
        int fd = accept4(listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        Conn *c = xrealloc(NULL, sizeof *c);
        memset(c, 0, sizeof *c);
        c->fd = fd;
        c->state = C_HEAD;
        epoll_set(c, 0);
    }
}

/* ------------------------------------------------------------------------------------------------ setup */

static void usage(int code) {
    fprintf(code ? stderr : stdout,
            "usage: emitter [--host H] [--port P] [--ttft-ms MS] [--itl-ms MS] [--events N] [--tokens-per-event T]\n"
            "               [--sync | --min-gap-us US] [--truth FILE] [--spin-us US] [--rt] [--model-name NAME]\n"
            "               [--vocab-size N]\n"
            "  --port 0 (default) picks a free port; the chosen URL is printed on stderr as\n"
            "  \"warmbench emitter listening on http://HOST:PORT\".\n"
            "  --itl-ms is the gap between two events of a stream (a decode step); each event carries\n"
            "  --tokens-per-event tokens. --events 0 (default): max_new_tokens / max_tokens from the body.\n"
            "  --sync: every stream's events fall on one global grid of decode steps (synchronized bursts).\n"
            "  --min-gap-us: no two streams' events due closer than this (first events move to a free slot).\n"
            "  --spin-us: sleep until this long before an event is due, then spin (default 20).\n"
            "  --rt: run SCHED_FIFO with locked memory when allowed (a warning otherwise).\n"
            "  GET /emitter/stats: lateness (write stamp - due time) p50/p99/max, also printed on exit; it sorts\n"
            "  every event's lateness, so ask once the streams are done.\n");
    exit(code);
}

static double num_arg(const char *flag, const char *v, double min) {
    char *end;
    double x = strtod(v, &end);
    if (*v == 0 || *end || !isfinite(x) || x < min) {
        fprintf(stderr, "emitter: %s: expected a number >= %g, got \"%s\"\n", flag, min, v);
        exit(2);
    }
    return x;
}

static void parse_args(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) usage(0);
        if (strcmp(a, "--sync") == 0) { opt.sync = 1; continue; }
        if (strcmp(a, "--rt") == 0) { opt.rt = 1; continue; }
        const char *eq = strchr(a, '=');
        char name[64];
        copy_field(name, sizeof name, a, eq ? (size_t)(eq - a) : strlen(a));
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v) {
            fprintf(stderr, "emitter: %s expects a value\n", name);
            exit(2);
        }
        if (strcmp(name, "--host") == 0) opt.host = v;
        else if (strcmp(name, "--port") == 0) opt.port = (int)num_arg(name, v, 0);
        else if (strcmp(name, "--ttft-ms") == 0) opt.ttft_ms = num_arg(name, v, 0);
        else if (strcmp(name, "--itl-ms") == 0) opt.itl_ms = num_arg(name, v, 0.001);
        else if (strcmp(name, "--events") == 0) opt.events = (long)num_arg(name, v, 0);
        else if (strcmp(name, "--tokens-per-event") == 0) opt.tokens_per_event = (long)num_arg(name, v, 1);
        else if (strcmp(name, "--truth") == 0) opt.truth_path = v;
        else if (strcmp(name, "--spin-us") == 0) opt.spin_us = num_arg(name, v, 0);
        else if (strcmp(name, "--min-gap-us") == 0) opt.min_gap_us = num_arg(name, v, 0);
        else if (strcmp(name, "--model-name") == 0) opt.model_name = v;
        else if (strcmp(name, "--vocab-size") == 0) opt.vocab_size = (long)num_arg(name, v, 1);
        else {
            fprintf(stderr, "emitter: unknown flag %s\n", a);
            usage(2);
        }
    }
    if (opt.port > 65535) {
        fprintf(stderr, "emitter: --port: expected 0..65535\n");
        exit(2);
    }
}

static void setup_realtime(void) {
    prctl(PR_SET_TIMERSLACK, 1UL); /* the default 50 µs slack would be most of the lateness budget */
    if (!opt.rt) return;
    struct sched_param sp = {.sched_priority = 10};
    if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
        fprintf(stderr, "emitter: --rt: SCHED_FIFO refused (%s); running at normal priority\n", strerror(errno));
        return;
    }
    if (mlockall(MCL_CURRENT | MCL_FUTURE) != 0) fprintf(stderr, "emitter: --rt: mlockall refused (%s)\n", strerror(errno));
    rt_active = 1;
}

static void setup_listener(void) {
    listen_fd = socket(strchr(opt.host, ':') ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listen_fd < 0) die("socket: %s", strerror(errno));
    int one = 1;
    setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_storage ss = {0};
    socklen_t len;
    if (strchr(opt.host, ':')) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        a->sin6_family = AF_INET6;
        a->sin6_port = htons((uint16_t)opt.port);
        if (inet_pton(AF_INET6, opt.host, &a->sin6_addr) != 1) die("--host: not an IPv6 address: %s", opt.host);
        len = sizeof *a;
    } else {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        a->sin_family = AF_INET;
        a->sin_port = htons((uint16_t)opt.port);
        if (inet_pton(AF_INET, opt.host, &a->sin_addr) != 1) die("--host: not an IPv4 address: %s", opt.host);
        len = sizeof *a;
    }
    if (bind(listen_fd, (struct sockaddr *)&ss, len) != 0) die("bind %s:%d: %s", opt.host, opt.port, strerror(errno));
    if (listen(listen_fd, SOMAXCONN) != 0) die("listen: %s", strerror(errno));
    len = sizeof ss;
    getsockname(listen_fd, (struct sockaddr *)&ss, &len);
    listen_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &listen_fd};
    epoll_ctl(epfd, EPOLL_CTL_ADD, listen_fd, &ev);
}

static void setup_signals(void) {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (signal_fd < 0) die("signalfd: %s", strerror(errno));
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &signal_fd};
    epoll_ctl(epfd, EPOLL_CTL_ADD, signal_fd, &ev);
}

/** SIGTERM/SIGINT: every open stream ends as a disconnect, the truth log is completed, the stats printed. */
static void shut_down(void) {
    close(listen_fd);
    for (size_t i = 0; i < n_requests; i++) {
        Request *r = requests[i];
        if (r->end == END_RUNNING && r->conn) conn_close(r->conn);
    }
    write_truth();
    if (truth_fd >= 0) close(truth_fd);
    Buf b = {0};
    BUF_LIT(&b, "warmbench emitter stats ");
    build_stats(&b);
    BUF_LIT(&b, "\n");
    fwrite(b.p, 1, b.len, stderr);
    exit(0);
}

int main(int argc, char **argv) {
    parse_args(argc, argv);
    /* Non-negative by parse_args: rounding by +0.5 needs no libm. */
    itl_ns = (int64_t)(opt.itl_ms * 1e6 + 0.5);
    ttft_ns = (int64_t)(opt.ttft_ms * 1e6 + 0.5);
    spin_ns = (int64_t)(opt.spin_us * 1e3 + 0.5);
    int64_t min_gap_ns = (int64_t)(opt.min_gap_us * 1e3 + 0.5);
    if (min_gap_ns > 0 && !opt.sync) {
        n_slots = itl_ns / min_gap_ns > 0 ? (long)(itl_ns / min_gap_ns) : 1;
        slot_count = xrealloc(NULL, (size_t)n_slots * sizeof *slot_count);
        memset(slot_count, 0, (size_t)n_slots * sizeof *slot_count);
        slots_held_cap = 2;
        slots_held = xrealloc(NULL, 2 * sizeof *slots_held);
        slots_held[0] = n_slots;
        slots_held[1] = 0;
    }
    if (opt.truth_path) {
        truth_fd = open(opt.truth_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (truth_fd < 0) die("--truth %s: %s", opt.truth_path, strerror(errno));
    }
    epfd = epoll_create1(EPOLL_CLOEXEC);
    if (epfd < 0) die("epoll_create1: %s", strerror(errno));
    setup_signals();
    setup_listener();
    setup_realtime();
    start_ns = now_ns();
    fprintf(stderr, "warmbench emitter listening on http://%s%s%s:%d (ttft %g ms, itl %g ms, %s, %s)\n",
            strchr(opt.host, ':') ? "[" : "", opt.host, strchr(opt.host, ':') ? "]" : "", listen_port, opt.ttft_ms,
            opt.itl_ms, opt.sync ? "sync" : "per-stream schedule", rt_active ? "SCHED_FIFO" : "normal priority");

    struct epoll_event evs[MAX_EVENTS];
    for (;;) {
        fire_due();
        struct timespec timeout, *wait = NULL;
        int64_t next = heap_len > 0 ? heap[0].due_ns : INT64_MAX;
        if (next == INT64_MAX) {
            if (stats.in_flight == 0) write_truth(); /* nothing is due: the only time a file write cannot delay an event */
        } else {
            int64_t ns = next - spin_ns - now_ns();
            if (ns < 0) ns = 0;
            timeout.tv_sec = ns / 1000000000LL;
            timeout.tv_nsec = ns % 1000000000LL;
            wait = &timeout;
        }
        int n = epoll_pwait2(epfd, evs, MAX_EVENTS, wait, NULL);
        if (n < 0 && errno != EINTR) die("epoll_pwait2: %s", strerror(errno));
        for (int i = 0; i < n; i++) {
            void *p = evs[i].data.ptr;
            if (p == &signal_fd) shut_down();
            if (p == &listen_fd) on_listener();
            else {
                Conn *c = p;
                if (!c->closed && (evs[i].events & EPOLLOUT)) on_writable(c);
                if (!c->closed && (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))) on_readable(c);
            }
            fire_due();
        }
        free_dead_conns();
        /* Within --spin-us of the next event: spin to it rather than trust a timer's wakeup. */
        if (heap_len > 0) {
            int64_t due = heap[0].due_ns;
            if (due - now_ns() <= spin_ns) while (now_ns() < due) cpu_relax();
        }
    }
}
