/*
 * broadcaster.c: the "limit to compare against" for RetroRapid's capacity benchmark.
 *
 * A minimal libwebsockets server that speaks just enough of retrorapid.v1 (docs/PROTOCOL.md)
 * for the Swift load generator to drive it unchanged: it answers hello/start/move/ping/quit
 * with pre-built messages of the real server's sizes and sends one `step` frame per interval
 * to every client with a running game. There is no game, no JSON parser, no database, no
 * authentication: only sockets, frames and one timer. See bench/README.md.
 *
 * Build:  cc -O2 -Wall -Wextra -std=c11 -o .build/bench/broadcaster bench/broadcaster.c \
 *             $(pkg-config --cflags --libs libwebsockets)
 * Run:    .build/bench/broadcaster [--address 127.0.0.1] [--port 8090] [--stats]
 *             [--poll] [--sndbuf BYTES] [--direct-writes] [--verbose]
 *
 * Written against Debian's libwebsockets 4.1.6 with the libev event-lib plugin.
 */
#define _GNU_SOURCE /* memmem */

#include <libwebsockets.h>

#include <assert.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>

/* ------------------------------------------------------------------------------------------ */
/* The messages. Fixed byte strings, the same shapes and sizes as the real server's.          */
/* ------------------------------------------------------------------------------------------ */

#define QUOTA_UNLIMITED                                                                        \
    "{\"playsLeft\":null,\"dailyFreePlays\":5,\"playsUsed\":0,\"unlimited\":true,"              \
    "\"resetsAt\":\"2026-11-30T00:00:00Z\"}"

static const char MSG_WELCOME[] =
    "{\"type\":\"welcome\",\"protocol\":\"retrorapid.v1\","
    "\"player\":{\"id\":\"7H5TSJ5TSP4A\",\"displayName\":\"Load\"},"
    "\"quota\":" QUOTA_UNLIMITED ","
    "\"resumable\":null,"
    "\"limits\":{\"maxMessageBytes\":4096,\"inputsPerSecond\":20,\"idleTimeoutSeconds\":900,"
    "\"disconnectGraceSeconds\":60}}";

/* `started` for each level: only "level" and "interval" differ. */
#define STARTED(level, interval)                                                               \
    "{\"type\":\"started\",\"game\":{\"gameId\":\"d7043122b71bd216\",\"level\":\"" level "\","  \
    "\"practice\":false,\"step\":0,"                                                           \
    "\"grid\":[[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0],[0,0,0]],"                      \
    "\"lane\":1,\"score\":0,\"interval\":" #interval ",\"speedStage\":0,"                      \
    "\"safeLanes\":[0,1,2],\"paused\":false},"                                                 \
    "\"quota\":" QUOTA_UNLIMITED "}"

static const char MSG_STARTED_CRUISE[] = STARTED("cruise", 800);
static const char MSG_STARTED_FAST[] = STARTED("fast", 600);
static const char MSG_STARTED_RAPID[] = STARTED("rapid", 420);

static const char MSG_MOVED[] = "{\"type\":\"moved\",\"lane\":0,\"safe\":true,\"haptic\":\"move\"}";
static const char MSG_PONG[] = "{\"type\":\"pong\"}";

static const char MSG_GAME_OVER[] =
    "{\"type\":\"gameOver\",\"gameId\":\"d7043122b71bd216\",\"reason\":\"abandoned\","
    "\"score\":42,\"steps\":57,\"practice\":false,\"saved\":true,\"personalBest\":55,"
    "\"newBest\":false,\"rank\":9,"
    "\"standings\":{\"today\":{\"period\":\"2026-11-29\",\"best\":42,\"newBest\":true,\"rank\":2},"
    "\"thisWeek\":{\"period\":\"2026-W48\",\"best\":42,\"newBest\":true,\"rank\":3},"
    "\"allTime\":{\"period\":\"all\",\"best\":55,\"newBest\":false,\"rank\":9}},"
    "\"quota\":" QUOTA_UNLIMITED "}";

/* The few refusals a well-behaved load generator could still meet. */
static const char MSG_ERR_IN_PROGRESS[] =
    "{\"type\":\"error\",\"code\":\"game_in_progress\","
    "\"message\":\"A game is already running.\",\"inReplyTo\":\"start\"}";
static const char MSG_ERR_NO_GAME[] =
    "{\"type\":\"error\",\"code\":\"no_game\",\"message\":\"No game is running.\"}";
static const char MSG_ERR_UNKNOWN[] =
    "{\"type\":\"error\",\"code\":\"unknown_type\","
    "\"message\":\"The broadcaster knows hello, start, move, ping and quit.\"}";

/* The one message built per frame: the step number (and a score) must be real, so a client
 * can check the sequence and measure jitter. About 160 bytes, like the real server's.
 * Every lane is safe, so the load generator's bot moves only when it wanders (a quarter of
 * the steps), about as often as it moves on the real server's roads; with one safe lane
 * that was not its own it moved every step, 3.6 times the real server's input load. */
static const char STEP_FORMAT[] =
    "{\"type\":\"step\",\"step\":%u,"
    "\"grid\":[[0,0,1],[0,0,0],[0,0,0],[0,1,0],[0,0,0],[1,0,1],[0,0,0]],"
    "\"lane\":1,\"score\":%u,\"interval\":%u,\"safeLanes\":[0,1,2],\"haptic\":\"step\"}";

/* Largest message we ever send; each send buffer is LWS_PRE + this. */
#define MSG_MAX 640
static_assert(sizeof MSG_GAME_OVER - 1 <= MSG_MAX, "gameOver must fit the send buffer");
static_assert(sizeof MSG_STARTED_CRUISE - 1 <= MSG_MAX, "started must fit the send buffer");
static_assert(sizeof MSG_WELCOME - 1 <= MSG_MAX, "welcome must fit the send buffer");

/* What a queue entry can be. An entry is a uint32_t: kind in the low 4 bits, and for K_STEP
 * the step number in the other 28 (268 million steps: years at 420 ms). */
enum kind {
    K_WELCOME, K_STARTED_CRUISE, K_STARTED_FAST, K_STARTED_RAPID, K_MOVED, K_PONG,
    K_GAME_OVER, K_ERR_IN_PROGRESS, K_ERR_NO_GAME, K_ERR_UNKNOWN,
    K_STEP /* built from STEP_FORMAT when it is written */
};

struct fixed { const char *bytes; size_t len; };
#define FIXED(s) { s, sizeof s - 1 }
static const struct fixed fixed_messages[] = {
    [K_WELCOME] = FIXED(MSG_WELCOME),
    [K_STARTED_CRUISE] = FIXED(MSG_STARTED_CRUISE),
    [K_STARTED_FAST] = FIXED(MSG_STARTED_FAST),
    [K_STARTED_RAPID] = FIXED(MSG_STARTED_RAPID),
    [K_MOVED] = FIXED(MSG_MOVED),
    [K_PONG] = FIXED(MSG_PONG),
    [K_GAME_OVER] = FIXED(MSG_GAME_OVER),
    [K_ERR_IN_PROGRESS] = FIXED(MSG_ERR_IN_PROGRESS),
    [K_ERR_NO_GAME] = FIXED(MSG_ERR_NO_GAME),
    [K_ERR_UNKNOWN] = FIXED(MSG_ERR_UNKNOWN),
};

/* ------------------------------------------------------------------------------------------ */
/* Connections                                                                                */
/* ------------------------------------------------------------------------------------------ */

#define QUEUE_MAX 64          /* messages waiting for one client; full = drop the client */
#define MAX_MESSAGE_BYTES 4096 /* incoming, counted across fragments (as the real server) */

/* Per-connection state: libwebsockets allocates it (zero-filled) for each connection as the
 * protocol's per_session_data, and frees it after LWS_CALLBACK_CLOSED. */
struct conn {
    struct lws *wsi;

    /* Timing wheel membership (see below): doubly linked list of one bucket. */
    struct conn *next;
    struct conn **pprev;      /* NULL when not in the wheel */

    uint64_t start_ms;        /* when `started` was queued (monotonic ms) */
    uint64_t due_ms;          /* deadline of the next step: start_ms + step * interval */
    uint32_t step;            /* last step number queued */
    uint32_t interval_ms;     /* 800, 600 or 420; 0 = no game */

    uint8_t closing;          /* sticky: return -1 from every later callback, write nothing */
    uint8_t own_socket;       /* its own TCP connection (not an h2 stream): may write at once */
    uint8_t qhead, qlen;      /* ring of pending messages */
    uint32_t queue[QUEUE_MAX];

    char *rx;                 /* only for a message that arrives in pieces (rare) */
    size_t rx_len;

    /* The queued path's send buffer, written at WRITEABLE; LWS_PRE bytes of headroom for the
     * header. One per connection, only reused at the next WRITEABLE, in case lws reads it
     * after lws_write returns. 4.1.6 does not (it copies any unsent remainder, see direct_tx),
     * but the default mode keeps it as it was, so its figures stay comparable. */
    unsigned char tx[LWS_PRE + MSG_MAX];
};

/* ------------------------------------------------------------------------------------------ */
/* The protocol (its callback is at the end)                                                  */
/* ------------------------------------------------------------------------------------------ */

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len);

/* One protocol, protocols[0]: so it is also what a client offering no subprotocol gets. */
static const struct lws_protocols protocols[] = {
    {
        .name = "retrorapid.v1",
        .callback = callback,
        .per_session_data_size = sizeof(struct conn),
        .rx_buffer_size = 1024,
    },
    { .name = NULL } /* terminator */
};

/* ...and say so explicitly: the vhost option "default" on the protocol. */
static const struct lws_protocol_vhost_options pvo_default = { NULL, NULL, "default", "1" };
static const struct lws_protocol_vhost_options pvo = { NULL, &pvo_default, "retrorapid.v1", "" };

/* Keepalive: long (the load generator answers PINGs anyway; the real server uses 20 s / 45 s,
 * which costs one PING per connection per 20 s, negligible next to the steps). */
static const lws_retry_bo_t idle_policy = {
    .secs_since_valid_ping = 600,
    .secs_since_valid_hangup = 900,
};

/* ------------------------------------------------------------------------------------------ */
/* The timing wheel: ONE lws_sul drives every game.                                           */
/*                                                                                            */
/* 4.1.6 keeps its timers in one sorted list and walks it on every insert: one sul per client */
/* collapses near 10,000 clients. Instead clients sit in 1024 buckets of 1 ms keyed by their  */
/* due millisecond (due_ms & 1023). Every interval is < 1024 ms, so a bucket only ever holds  */
/* clients due in that very millisecond. The sul fires at the next non-empty bucket (at most  */
/* IDLE_WAKE_MS later), sends the steps of every bucket whose time has come, and reschedules. */
/* ------------------------------------------------------------------------------------------ */

#define WHEEL_SIZE 1024
#define WHEEL_MASK (WHEEL_SIZE - 1)
#define IDLE_WAKE_MS 50 /* longest sleep: also how soon the tick notices a stop or prints stats */

static struct conn *wheel[WHEEL_SIZE];
static uint64_t wheel_next_ms;      /* first millisecond not yet processed */
static unsigned wheel_count;        /* clients in the wheel = running games */

static struct lws_context *context;
static lws_sorted_usec_list_t tick_sul; /* static: the sul needs a stable address */

static volatile sig_atomic_t stop_requested; /* set by SIGINT/SIGTERM */
static uint64_t stop_deadline_ms;               /* 0 until the tick has seen stop_requested */
static int stop_now;                            /* poll loop: main() leaves its loop */
static int use_libev = 1;
static int print_stats;
static int direct_writes;           /* --direct-writes: see send_message() */
static int sndbuf_bytes = 16384;    /* the real server's SO_SNDBUF for game sockets */

/* Counters for --stats. */
static unsigned long connections;
static unsigned long long messages_sent, messages_sent_at_last_stats;
static uint64_t next_stats_ms;
static uint64_t tick_late_max_ms; /* worst (now - bucket time) seen by the tick since last stats */

static uint64_t now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t now_ms(void) { return now_us() / 1000u; }

static void wheel_insert(struct conn *c)
{
    struct conn **head = &wheel[c->due_ms & WHEEL_MASK];
    c->next = *head;
    if (c->next)
        c->next->pprev = &c->next;
    *head = c;
    c->pprev = head;
    wheel_count++;
}

static void wheel_remove(struct conn *c)
{
    if (!c->pprev)
        return;
    *c->pprev = c->next;
    if (c->next)
        c->next->pprev = c->pprev;
    c->next = NULL;
    c->pprev = NULL;
    wheel_count--;
}

/* ------------------------------------------------------------------------------------------ */
/* Sending. By default every message is queued and goes out at WRITEABLE, one lws_write per   */
/* WRITEABLE (the canonical lws pattern). With --direct-writes a message is written at once   */
/* when nothing waits before it, as the Swift server does (WebSocketConnection.send): so the  */
/* two can be compared like with like.                                                        */
/*                                                                                            */
/* Threading rule: all of this runs on the one service thread (count_threads = 1), from the   */
/* tick (a sul callback) and from RECEIVE / WRITEABLE; lws APIs are not thread-safe, and the  */
/* shared direct_tx below is only safe because nothing else can write to it meanwhile.        */
/* ------------------------------------------------------------------------------------------ */

/* The one buffer every message written at once is built in, shared by all connections.
 * Safe because lws 4.1.6 is done with it when lws_write returns: whatever the socket does not
 * take at once, lws_issue_raw copies to the wsi's own buflist_out and sends from there later
 * (lib/core-net/output.c), and we use no extension (none would keep a pointer either). */
static unsigned char direct_tx[LWS_PRE + MSG_MAX];

/* Builds queue entry `entry` at `payload` (MSG_MAX bytes); returns its length. */
static size_t build_message(const struct conn *c, uint32_t entry, unsigned char *payload)
{
    if ((entry & 15) == K_STEP) {
        uint32_t step = entry >> 4;
        int n = snprintf((char *)payload, MSG_MAX, STEP_FORMAT, step, step / 2, c->interval_ms);
        return (size_t)n;
    }
    const struct fixed *m = &fixed_messages[entry & 15];
    memcpy(payload, m->bytes, m->len);
    return m->len;
}

static void end_game(struct conn *c);

/* Drop a client that does not read: close 1008 as the real server does. If even the close
 * frame cannot go out within 5 s, lws cuts the socket. */
static void drop_slow_client(struct conn *c)
{
    static const char reason[] = "too slow: 64 messages unread";
    end_game(c);
    c->closing = 1;
    c->qlen = 0;
    lws_close_reason(c->wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION,
                     (unsigned char *)reason, sizeof reason - 1);
    lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, 5);
    lws_callback_on_writable(c->wsi); /* returning -1 there sends the close frame */
}

/* --direct-writes: write one message now, outside WRITEABLE. A failed write cannot be
 * answered with -1 here (the tick is no callback of this wsi, and RECEIVE's caller does not
 * pass it back), so the connection is marked closing (nothing more is written) and lws is
 * asked to close it on its next turn, as the Swift server does. */
static void write_now(struct conn *c, uint32_t entry)
{
    unsigned char *payload = direct_tx + LWS_PRE;
    size_t len = build_message(c, entry, payload);

    /* lws returns len even when it kept part of the frame in buflist_out; -1 when the socket
     * failed (it then marks it permanently unusable, so no close frame is attempted). */
    if (lws_write(c->wsi, payload, len, LWS_WRITE_TEXT) < (int)len) {
        end_game(c);
        c->closing = 1;
        c->qlen = 0;
        lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
        return;
    }
    messages_sent++;
}

/* Send a message: at once (--direct-writes, when allowed), else queued for WRITEABLE. */
static void send_message(struct conn *c, enum kind k, uint32_t arg)
{
    uint32_t entry = (arg << 4) | (uint32_t)k;

    if (c->closing)
        return;
    /* At once only when nothing waits before it: nothing of ours queued (it would overtake
     * it), nothing of lws's left from the last write (the socket is full: lws would only copy
     * ours behind it), and a socket of its own (an h2 stream must wait for its WRITEABLE: flow
     * control). The same rule as the Swift server. After a stop request everything goes to
     * WRITEABLE, where the connection is closed with 1001. */
    if (direct_writes && !c->qlen && c->own_socket && !stop_requested &&
        !lws_partial_buffered(c->wsi)) {
        write_now(c, entry);
        return;
    }
    if (c->qlen == QUEUE_MAX) {
        drop_slow_client(c);
        return;
    }
    c->queue[(c->qhead + c->qlen) % QUEUE_MAX] = entry;
    c->qlen++;
    if (c->qlen == 1)
        lws_callback_on_writable(c->wsi); /* more are requested after each write */
}

/* LWS_CALLBACK_SERVER_WRITEABLE: copy the oldest message into our buffer and send it. */
static int write_one(struct conn *c)
{
    unsigned char *payload = c->tx + LWS_PRE;
    size_t len;

    if (stop_requested && !c->closing) {
        static const char reason[] = "server stopping";
        end_game(c);
        c->closing = 1;
        lws_close_reason(c->wsi, LWS_CLOSE_STATUS_GOINGAWAY,
                         (unsigned char *)reason, sizeof reason - 1);
    }
    if (c->closing)
        return -1; /* lws sends the close frame set by lws_close_reason */
    if (!c->qlen)
        return 0;

    len = build_message(c, c->queue[c->qhead], payload);
    c->qhead = (uint8_t)((c->qhead + 1) % QUEUE_MAX);
    c->qlen--;

    if (lws_write(c->wsi, payload, len, LWS_WRITE_TEXT) < (int)len)
        return -1;
    messages_sent++;

    if (c->qlen)
        lws_callback_on_writable(c->wsi);
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* Games (there are none: a game is a step counter and a deadline)                            */
/* ------------------------------------------------------------------------------------------ */

static void schedule_tick(void);
static void tick(lws_sorted_usec_list_t *sul);

static void start_game(struct conn *c, uint32_t interval_ms, enum kind started)
{
    c->interval_ms = interval_ms;
    c->step = 0;
    c->start_ms = now_ms();
    c->due_ms = c->start_ms + interval_ms; /* first step one interval after `started` */
    send_message(c, started, 0);
    if (c->closing)
        return;
    if (c->due_ms < wheel_next_ms) /* cannot happen, but never file into the past */
        c->due_ms = wheel_next_ms;
    wheel_insert(c);
}

static void end_game(struct conn *c)
{
    wheel_remove(c);
    c->interval_ms = 0;
}

/* Send the next step of one client and file it under its next absolute deadline. */
static void step_client(struct conn *c, uint64_t processing_ms)
{
    c->step++;
    send_message(c, K_STEP, c->step);
    if (c->closing) /* dropped as too slow: the game is already ended */
        return;
    /* Absolute deadline: start + (step + 1) * interval, never "now + interval" (no drift). */
    c->due_ms = c->start_ms + (uint64_t)(c->step + 1) * c->interval_ms;
    /* Running late by a whole interval (overload): send the next step as soon as possible,
     * keeping the deadlines; the clients see it as jitter, and a client that cannot take the
     * burst is dropped when its queue fills. */
    if (c->due_ms <= processing_ms)
        c->due_ms = processing_ms + 1;
    wheel_insert(c);
}

static void print_stats_line(uint64_t t)
{
    static uint64_t last_ms;
    double secs = last_ms ? (double)(t - last_ms) / 1000.0 : 5.0;
    unsigned long long sent = messages_sent - messages_sent_at_last_stats;
    printf("connections %lu, games %u, sent %.0f/s, steps late by up to %llu ms\n", connections,
           wheel_count, secs > 0 ? (double)sent / secs : 0.0,
           (unsigned long long)tick_late_max_ms);
    tick_late_max_ms = 0;
    fflush(stdout);
    messages_sent_at_last_stats = messages_sent;
    last_ms = t;
}

/* The one timer. */
static void tick(lws_sorted_usec_list_t *sul)
{
    uint64_t t = now_ms();
    (void)sul;

    if (stop_requested) {
        /* Shutdown, in two steps. First: every connection gets a WRITEABLE, where it is
         * closed with 1001 (as the real server does); steps stop. Then, once all are closed
         * (or after 1 s): stop the loop. */
        if (!stop_deadline_ms) {
            stop_deadline_ms = t + 1000;
            lws_callback_on_writable_all_protocol(context, &protocols[0]);
        }
        if (connections && t < stop_deadline_ms) {
            lws_sul_schedule(context, 0, &tick_sul, tick, 10 * LWS_US_PER_MS);
            return;
        }
        if (use_libev)
            /* With an event library, lws_service() only returns when the loop stops: a
             * destroy started from inside the loop closes what is left and stops it;
             * main() then calls lws_context_destroy() again to finish. (A flag alone would
             * never be seen.) With the poll loop, main() sees stop_now itself. */
            lws_context_destroy(context);
        else {
            stop_now = 1;
            lws_cancel_service(context); /* or poll() would sleep with no timer armed */
        }
        return;
    }

    /* Every millisecond from the last one processed to now, in order. step_client files each
     * client under a later millisecond, so popping a bucket until it is empty terminates. */
    for (; wheel_next_ms <= t; wheel_next_ms++) {
        struct conn **head = &wheel[wheel_next_ms & WHEEL_MASK];
        struct conn *c;
        if (*head && t - wheel_next_ms > tick_late_max_ms)
            tick_late_max_ms = t - wheel_next_ms;
        while ((c = *head) != NULL) {
            wheel_remove(c);
            step_client(c, wheel_next_ms);
        }
    }

    if (print_stats && t >= next_stats_ms) {
        print_stats_line(t);
        next_stats_ms = t + 5000;
    }

    schedule_tick();
}

/* Arm the sul for the next non-empty bucket, at most IDLE_WAKE_MS ahead. A game started
 * meanwhile needs no wake-up of its own: its first step is >= 420 ms away, and the tick
 * looks at the wheel again within IDLE_WAKE_MS. */
static void schedule_tick(void)
{
    uint64_t due = wheel_next_ms + IDLE_WAKE_MS, wake_us, now;

    if (wheel_count)
        for (uint64_t ms = wheel_next_ms; ms < due; ms++)
            if (wheel[ms & WHEEL_MASK]) {
                due = ms;
                break;
            }
    /* lws_sul_schedule takes a delay relative to now (4.1.6), on its own clock. */
    wake_us = due * 1000u;
    now = now_us();
    lws_sul_schedule(context, 0, &tick_sul, tick, wake_us > now ? (lws_usec_t)(wake_us - now) : 0);
}

/* ------------------------------------------------------------------------------------------ */
/* Incoming messages: no JSON parser, just look for the value of "type" (and "level").         */
/* ------------------------------------------------------------------------------------------ */

/* Find `"key"`, skip `:` and blanks, and return the start of its string value (after the
 * opening quote), or NULL. Tolerates "key": "value" as well as "key":"value". */
static const char *string_value(const char *msg, size_t len, const char *key, size_t key_len)
{
    const char *end = msg + len;
    const char *p = memmem(msg, len, key, key_len);
    if (!p)
        return NULL;
    p += key_len;
    while (p < end && (*p == ' ' || *p == '\t' || *p == ':'))
        p++;
    if (p >= end || *p != '"')
        return NULL;
    return p + 1;
}

static int value_is(const char *v, const char *msg_end, const char *word)
{
    size_t n = strlen(word);
    return v && (size_t)(msg_end - v) > n && memcmp(v, word, n) == 0 && v[n] == '"';
}

static void handle_message(struct conn *c, const char *msg, size_t len)
{
    const char *end = msg + len;
    const char *type = string_value(msg, len, "\"type\"", 6);

    if (value_is(type, end, "move")) {
        send_message(c, c->interval_ms ? K_MOVED : K_ERR_NO_GAME, 0);
    } else if (value_is(type, end, "ping")) {
        send_message(c, K_PONG, 0);
    } else if (value_is(type, end, "hello")) {
        send_message(c, K_WELCOME, 0);
    } else if (value_is(type, end, "start")) {
        const char *level = string_value(msg, len, "\"level\"", 7);
        if (c->interval_ms)
            send_message(c, K_ERR_IN_PROGRESS, 0);
        else if (value_is(level, end, "cruise"))
            start_game(c, 800, K_STARTED_CRUISE);
        else if (value_is(level, end, "rapid"))
            start_game(c, 420, K_STARTED_RAPID);
        else
            start_game(c, 600, K_STARTED_FAST); /* "fast", or no level given */
    } else if (value_is(type, end, "quit")) {
        if (c->interval_ms) {
            end_game(c);
            send_message(c, K_GAME_OVER, 0);
        } else {
            send_message(c, K_ERR_NO_GAME, 0);
        }
    } else {
        send_message(c, K_ERR_UNKNOWN, 0);
    }
}

/* LWS_CALLBACK_RECEIVE: a whole message in one piece is the normal case (small messages,
 * rx_buffer_size 1024). A message in pieces is gathered in c->rx, up to 4,096 bytes. */
static int receive(struct conn *c, const char *in, size_t len)
{
    int complete = lws_is_final_fragment(c->wsi) && !lws_remaining_packet_payload(c->wsi);

    if (c->closing) {
        /* --direct-writes: a client is only dropped as too slow while lws still holds part of
         * a frame (that is when messages queue). Returning -1 then puts the wsi into
         * LRS_FLUSHING_BEFORE_CLOSE, where 4.1.6 busy-loops on every byte that arrives (its rx
         * buflist is re-served and never consumed) and, once flushed, cuts the socket without
         * our 1008. So ignore input instead: the WRITEABLE that follows the flush returns -1
         * and lws sends the close frame (or the 5 s timeout cuts the socket). */
        if (direct_writes && lws_partial_buffered(c->wsi))
            return 0;
        return -1;
    }

    if (complete && !c->rx) {
        handle_message(c, in, len);
        return 0;
    }

    if (c->rx_len + len > MAX_MESSAGE_BYTES) {
        static const char reason[] = "message larger than 4096 bytes";
        c->closing = 1;
        lws_close_reason(c->wsi, LWS_CLOSE_STATUS_MESSAGE_TOO_LARGE,
                         (unsigned char *)reason, sizeof reason - 1);
        return -1;
    }
    if (!c->rx && !(c->rx = malloc(MAX_MESSAGE_BYTES)))
        return -1;
    memcpy(c->rx + c->rx_len, in, len);
    c->rx_len += len;
    if (complete) {
        handle_message(c, c->rx, c->rx_len);
        free(c->rx);
        c->rx = NULL;
        c->rx_len = 0;
    }
    return 0;
}

/* ------------------------------------------------------------------------------------------ */
/* The protocol callback                                                                      */
/* ------------------------------------------------------------------------------------------ */

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
                    size_t len)
{
    struct conn *c = user;

    switch (reason) {
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: {
        /* Only /ws upgrades (the real server answers 404 for others). */
        char uri[16];
        if (lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) < 0 || strcmp(uri, "/ws"))
            return 1; /* refuse the upgrade */
        return 0;
    }

    case LWS_CALLBACK_ESTABLISHED:
        c->wsi = wsi;
        c->own_socket = lws_get_network_wsi(wsi) == wsi; /* HTTP/1.1 upgrade, not h2 */
        connections++;
        if (sndbuf_bytes > 0) {
            int fd = lws_get_socket_fd(wsi);
            setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf_bytes, sizeof sndbuf_bytes);
        }
        return 0;

    case LWS_CALLBACK_RECEIVE:
        return receive(c, in, len);

    case LWS_CALLBACK_SERVER_WRITEABLE:
        return write_one(c);

    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        /* The client sent a close frame; lws answers it at its next POLLOUT and then closes.
         * Queued messages cannot overtake that answer (lws gives no WRITEABLE after a peer's
         * close), but a direct write from the tick could: stop writing now. Returning 0 lets
         * lws echo the close. */
        if (direct_writes) {
            end_game(c);
            c->closing = 1;
            c->qlen = 0;
        }
        return 0;

    case LWS_CALLBACK_CLOSED:
        /* Abrupt or clean, this is where a connection ends: out of the wheel, free rx.
         * 4.1.6 also calls this for an upgrade refused in FILTER_PROTOCOL_CONNECTION, which
         * never was ESTABLISHED: c->wsi tells them apart. */
        if (!c || !c->wsi)
            return 0;
        end_game(c);
        free(c->rx);
        c->rx = NULL;
        connections--;
        return 0;

    case LWS_CALLBACK_HTTP:
        /* Anything that is not a WebSocket upgrade: 404. */
        if (lws_return_http_status(wsi, HTTP_STATUS_NOT_FOUND, NULL))
            return -1;
        return lws_http_transaction_completed(wsi) ? -1 : 0;

    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        /* lws_cancel_service() from the signal handler: run the tick now to see the flag. */
        if (stop_requested && use_libev)
            lws_sul_schedule(context, 0, &tick_sul, tick, 1);
        return 0;

    default:
        break;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* ------------------------------------------------------------------------------------------ */
/* main                                                                                       */
/* ------------------------------------------------------------------------------------------ */

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
    /* Wakes the loop (it writes to lws's event pipe); the rest happens on the loop. */
    if (context)
        lws_cancel_service(context);
}

static void usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--address 127.0.0.1] [--port 8090] [--stats] [--poll]\n"
            "          [--sndbuf BYTES (16384; 0 = kernel default)] [--direct-writes]\n"
            "          [--verbose]\n",
            argv0);
}

int main(int argc, char **argv)
{
    const char *address = "127.0.0.1";
    int port = 8090, verbose = 0;
    struct lws_context_creation_info info;
    struct rlimit rl;
    struct sigaction sa;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--port") && i + 1 < argc)
            port = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--address") && i + 1 < argc)
            address = argv[++i];
        else if (!strcmp(argv[i], "--sndbuf") && i + 1 < argc)
            sndbuf_bytes = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--stats"))
            print_stats = 1;
        else if (!strcmp(argv[i], "--poll"))
            use_libev = 0;
        else if (!strcmp(argv[i], "--direct-writes"))
            direct_writes = 1;
        else if (!strcmp(argv[i], "--verbose"))
            verbose = 1;
        else {
            usage(argv[0]);
            return 2;
        }
    }

    /* File descriptors: raise the soft limit to the hard one (20,000 here; it cannot be
     * raised further without CAP_SYS_RESOURCE), and let the one service thread use them all.
     * lws sizes its fd lookup table from this. */
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl))
            fprintf(stderr, "setrlimit(RLIMIT_NOFILE): %s\n", strerror(errno));
    }
    getrlimit(RLIMIT_NOFILE, &rl);

    lws_set_log_level(verbose ? LLL_ERR | LLL_WARN | LLL_NOTICE : LLL_ERR | LLL_WARN, NULL);

    memset(&info, 0, sizeof info);
    info.port = port;
    info.iface = address;
    info.protocols = protocols;
    info.pvo = &pvo;
    info.count_threads = 1;
    info.fd_limit_per_thread = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 1000000
                                   ? 1000000 : (unsigned)rl.rlim_cur;
    info.retry_and_idle_policy = &idle_policy;
    info.ka_time = 0;           /* no TCP keepalive */
    /* No TLS, no extensions (so no permessage-deflate), no mounts. */
    info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
    if (use_libev)
        /* 4.1.6 loads /usr/lib/x86_64-linux-gnu/libwebsockets-evlib_ev.so by itself
         * (Debian's libwebsockets-evlib-ev); nothing to link or point at. */
        info.options |= LWS_SERVER_OPTION_LIBEV;

    context = lws_create_context(&info);
    if (!context && use_libev) {
        fprintf(stderr,
                "!!! WARNING: libev event loop unavailable (is libwebsockets-evlib-ev "
                "installed?); FALLING BACK TO poll(), which costs far more CPU with many "
                "connections. Figures from this run are NOT the reference. !!!\n");
        use_libev = 0;
        info.options &= ~(uint64_t)LWS_SERVER_OPTION_LIBEV;
        context = lws_create_context(&info);
    }
    if (!context) {
        fprintf(stderr, "lws_create_context failed (port %d in use?)\n", port);
        return 1;
    }

    /* Installed after the context, on purpose: the libev plugin installs its own SIGINT
     * watcher (which would just break the loop); ours replaces it, and covers SIGTERM. */
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    wheel_next_ms = now_ms();
    next_stats_ms = wheel_next_ms + 5000;
    schedule_tick();

    printf("listening on %s:%d (%s, %s writes)\n", address, port, use_libev ? "libev" : "poll",
           direct_writes ? "direct" : "queued");
    fflush(stdout);

    if (use_libev)
        /* Runs ev_run() until the tick destroys the context on a stop request. */
        lws_service(context, 0);
    else
        while (!stop_now && lws_service(context, 0) >= 0)
            ;

    lws_context_destroy(context);
    context = NULL;
    if (print_stats)
        printf("stopped: %llu messages sent\n", messages_sent);
    return 0;
}
