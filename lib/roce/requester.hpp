// requester.hpp - the sending side of one RC queue pair (go-back-N).
//
// What: decides which packet of which message to send next, and reacts to
// ACKs, NAKs and the local ACK timeout as an RC requester does (reference
// sec. 1.7). It never builds bytes: next() fills a tx_desc (opcode, PSN,
// payload offset/length in the message, AckReq, retransmission flag, message
// id) and the caller builds the frame with lib/proto (roce/frame.hpp
// fill_data_params + build_roce_v4: DestQP, DSCP/ECN, qp_udp_sport, RETH
// {remote_va, rkey, msg_size} on RDMA WRITE FIRST/ONLY). Pacing is the
// caller's: ask a shaper (qos/shaper.hpp) before calling next().
//
// Sequence numbers: internally every packet has a 64-bit absolute sequence
// number (0 = the first packet after construction); the wire PSN is
// (start_psn + seq) mod 2^24. Incoming PSNs are mapped back by the signed
// 24-bit distance from snd_una (psn_diff), so PSN wrap needs no special case
// and windows are plain integer differences. Messages occupy contiguous
// sequence ranges, assigned when posted.
//
//   snd_una  oldest packet not yet acknowledged
//   snd_nxt  next packet to (re)send; snd_nxt - snd_una <= window
//   snd_max  one past the highest packet ever sent (seq < snd_max on send
//            means a retransmission)
//
// Behaviour:
//   * on_ack(psn): cumulative, everything up to psn is done; completes the
//     messages whose last packet is <= psn and records their FCT
//     (completion time - post time). ACKs behind snd_una are duplicates
//     (counted), ACKs for never-sent PSNs are counted as invalid and ignored.
//   * on_nak(psn, 0x60 PSN sequence error): everything before psn is
//     acknowledged; snd_nxt = psn (go-back-N: resend psn, psn+1, ...).
//   * on_nak(psn, RNR 0x20|t): like a sequence error, but sending pauses for
//     rnr_timer_of(t); rnr_retry (7 = infinite) consecutive RNR NAKs without
//     progress are allowed, then the QP enters error.
//   * on_nak(other NAK codes: invalid request, remote access/operational
//     error): fatal, the QP enters error.
//   * poll_timeout(now): if packets are outstanding and no progress was made
//     for ack_timeout_of(cfg.ack_timeout), rewind snd_nxt to snd_una and use
//     one retry; after retry_cnt consecutive timeouts without progress the
//     next one moves the QP to error (RETRY_EXC_ERR; counted in
//     retry_exceeded). The retry budget is refilled by any progress.
//     IBTA: retry_cnt 7 means 7 retries (only rnr_retry 7 is infinite);
//     Linux rxe treats retry_cnt 7 as infinite too: cfg.retry_infinite
//     selects that. rxe also spends a retry on each NAK-sequence-error
//     retransmission; here only timeouts spend retries.
//   * The timer runs while anything is outstanding; it is (re)started when
//     a packet is sent into an empty pipe, on every ACK/NAK that makes
//     progress, and on every rewind.
//
// Deadlines: poll_timeout() and next_deadline() return the next time the
// requester wants to be polled (nanos::max() when none).
//
// Memory: the message table (max_messages) and the completion ring
// (completion_capacity) are allocated at construction, rounded up to powers
// of two; nothing allocates afterwards. post_message() fails (counted) when
// the table is full. Completions that find the ring full are dropped from the
// ring (counted in completions_dropped) but still counted and summed.
//
// Counters (requester_counters; per-flow result names of USERS.md):
//   tx_packets/tx_bytes (payload bytes, retransmissions included),
//   retx_packets/retx_bytes, acks_rx, acks_dup, acks_invalid, msn_mismatch,
//   naks_rx, naks_seq, naks_rnr, naks_fatal, naks_stale, naks_invalid,
//   timeouts,
//   retry_exceeded, messages_posted, post_rejected, messages_completed,
//   bytes_completed, fct_sum_ns, fct_max_ns, completions_dropped.
//
// Example:
//   requester rq{cfg};
//   rq.post_message(now, bytes{65536});
//   tx_desc d;
//   while (pacer.conforms(now) && rq.next(now, d)) { build + send; pacer.on_send(...); }
//   k = rq.next_burst(now, descs, 32);   // or up to 32 at once: as 32 next() calls
//   rq.on_ack(now, psn, msn);            // from a received ACK
//   deadline = rq.poll_timeout(now);
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/counter.hpp"
#include "core/units.hpp"
#include "proto/bth.hpp"
#include "proto/psn.hpp"
#include "roce/qp_cfg.hpp"

namespace rocelab {

// What to send next; the caller builds the frame.
struct tx_desc {
    std::uint64_t msg_id = 0;
    std::uint64_t msg_size = 0;  // bytes in the whole message (RETH DMA length)
    std::uint64_t offset = 0;    // payload offset within the message
    std::uint32_t len = 0;       // payload bytes in this packet
    std::uint32_t psn = 0;
    std::uint8_t opcode = 0;
    bool ack_req = false;
    bool retransmit = false;
};

// One completed message.
struct msg_completion {
    std::uint64_t msg_id = 0;
    std::uint64_t size = 0;
    nanos posted{};
    nanos completed{};
    nanos fct() const noexcept { return completed - posted; }
};

// The counters (doc block above), one list for the struct and the reports
// that list them all (core/counter.hpp), a group a line (clang-format off:
// it would re-flow the groups).
// clang-format off
#define ROCELAB_REQUESTER_COUNTERS(X)                                              \
    X(tx_packets) X(tx_bytes) X(retx_packets) X(retx_bytes)                        \
    X(acks_rx) X(acks_dup) X(acks_invalid) X(msn_mismatch)                         \
    X(naks_rx) X(naks_seq) X(naks_rnr) X(naks_fatal) X(naks_stale) X(naks_invalid) \
    X(timeouts) X(retry_exceeded)                                                  \
    X(messages_posted) X(post_rejected) X(messages_completed) X(bytes_completed)   \
    X(fct_sum_ns) X(fct_max_ns) X(completions_dropped)
// clang-format on

// Live (the worker counts; status line and telemetry read them while it
// runs: counter64, relaxed atomics).
struct requester_counters {
    ROCELAB_REQUESTER_COUNTERS(ROCELAB_COUNTER64)
};
// A snapshot of them, plain integers (reports, messages between ranks).
struct requester_counts {
    ROCELAB_REQUESTER_COUNTERS(ROCELAB_U64_COUNTER)
};
ROCELAB_COUNTER_SNAPSHOT(ROCELAB_REQUESTER_COUNTERS, requester_counters, requester_counts)

enum class qp_state : std::uint8_t { ready = 0, error = 1 };
enum class qp_error : std::uint8_t { none = 0, retry_exceeded, rnr_retry_exceeded, remote_nak };

class requester {
public:
    // cfg must pass qp_cfg_check (control path). Allocates the message table
    // and the completion ring here and never again.
    // The memory one slot of max_messages costs: a message table entry and a
    // completion ring entry (both sized alike, written at construction).
    static constexpr std::size_t bytes_per_message_slot = 40 + sizeof(msg_completion);

    explicit requester(const qp_cfg& cfg, std::uint32_t max_messages = 1024,
                       std::uint32_t completion_capacity = 1024)
        : _cfg(cfg),
          _timeout(ack_timeout_of(cfg.ack_timeout)),
          _msgs(round_pow2(max_messages)),
          _msg_mask(static_cast<std::uint32_t>(_msgs.size() - 1)),
          _done(round_pow2(completion_capacity)),
          _done_mask(static_cast<std::uint32_t>(_done.size() - 1)) {}

    // Queue a message of `size` bytes posted at `now`. Message ids are
    // 0, 1, 2, ... in post order. False (counted) when the table is full, the
    // size exceeds 2^31 or the QP is in error.
    bool post_message(nanos now, bytes size) noexcept {
        if (_state != qp_state::ready || size.v > max_message_size || _msg_tail - _msg_head == _msgs.size()) {
            ++_c.post_rejected;
            return false;
        }
        msg_slot& m = _msgs[_msg_tail & _msg_mask];
        m.id = _c.messages_posted;
        m.size = size.v;
        m.npkts = packets_of(size.v, _cfg.pmtu);
        m.first = _end;
        m.posted = now;
        _end += m.npkts;
        ++_msg_tail;
        ++_c.messages_posted;
        return true;
    }

    // Next packet to send at `now`, if the window, the posted messages and
    // the QP state allow one. Accounts it as sent.
    bool next(nanos now, tx_desc& out) noexcept { return next_burst(now, &out, 1) == 1; }

    // Up to max packets at `now`, as that many calls of next() would give
    // them (out[0..k), k returned; fewer where next() would refuse): the
    // window, the posted messages and the QP state are checked once, the
    // state is written back once. max >= 1.
    std::uint32_t next_burst(nanos now, tx_desc* out, std::uint32_t max) noexcept {
        std::uint64_t nxt = _nxt;
        const std::uint64_t lim = std::min(_end, _una + _cfg.window);  // _una <= _nxt <= _end
        if (_state != qp_state::ready || nxt >= lim) {
            return 0;
        }
        if (_rnr_until.v != INT64_MIN) {
            if (now < _rnr_until) {
                return 0;
            }
            _rnr_until = nanos{INT64_MIN};
        }
        if (_una == _max) {
            _timer_start = now;  // first packet into an empty pipe starts the timer
        }
        const std::uint64_t max0 = _max;  // below it: a retransmission
        const std::uint32_t every = _cfg.ack_req_every;
        std::uint64_t cur = _cur;
        std::uint64_t bytes = 0;
        std::uint64_t retx_pkts = 0;
        std::uint64_t retx_bytes = 0;
        std::uint32_t k = 0;
        // The message's slot is read once, and again only after its last
        // packet. Reading it per packet made a chain of loads through the
        // loop (the slot's address came from the last packet's `last`,
        // itself from the slot's load): 9 % of tx_port's cycles at
        // --tx-only (perf). Now the loop carries only registers. The slot
        // read after a message's last packet may be past the posted ones
        // (cur == _msg_tail) when the loop ends there: it is not used then.
        const msg_slot* m = &_msgs[cur & _msg_mask];
        std::uint64_t id = m->id;
        std::uint64_t size = m->size;
        std::uint64_t mfirst = m->first;
        std::uint32_t npkts = m->npkts;
        for (; k < max && nxt < lim; ++k, ++nxt) {
            const std::uint64_t idx = nxt - mfirst;
            const bool first = idx == 0;
            const bool last = idx + 1 == npkts;
            tx_desc& d = out[k];
            d.msg_id = id;
            d.msg_size = size;
            d.offset = idx * _cfg.pmtu;
            d.len = static_cast<std::uint32_t>(last ? size - d.offset : _cfg.pmtu);
            d.psn = wire_psn(nxt);
            d.opcode = rc_opcode(_cfg.family, first, last);
            d.ack_req = last || (every != 0 && (nxt + 1) % every == 0);
            d.retransmit = nxt < max0;
            bytes += d.len;
            if (d.retransmit) {
                ++retx_pkts;
                retx_bytes += d.len;
            }
            if (last) {
                ++cur;
                m = &_msgs[cur & _msg_mask];
                id = m->id;
                size = m->size;
                mfirst = m->first;
                npkts = m->npkts;
            }
        }
        _c.tx_packets += k;
        _c.tx_bytes += bytes;
        _c.retx_packets += retx_pkts;
        _c.retx_bytes += retx_bytes;
        _nxt = nxt;
        _max = std::max(_max, nxt);
        _cur = cur;
        return k;
    }

    std::optional<tx_desc> next_packet(nanos now) noexcept {
        tx_desc d;
        if (next(now, d)) {
            return d;
        }
        return std::nullopt;
    }

    // ACK (AETH type ACK) with BTH PSN `psn` and AETH MSN `msn`.
    void on_ack(nanos now, std::uint32_t psn, std::uint32_t msn) noexcept {
        ++_c.acks_rx;
        if (_state != qp_state::ready) {
            return;
        }
        const std::int64_t seq = to_seq(psn);
        if (seq >= static_cast<std::int64_t>(_max)) {
            ++_c.acks_invalid;
            return;
        }
        if (seq < static_cast<std::int64_t>(_una)) {
            ++_c.acks_dup;
            return;
        }
        advance_una(now, static_cast<std::uint64_t>(seq) + 1);
        if ((msn & psn_mask) != (_completed_msgs & psn_mask)) {
            ++_c.msn_mismatch;
        }
    }

    // NAK or RNR NAK (AETH syndrome) with BTH PSN `psn`.
    void on_nak(nanos now, std::uint32_t psn, std::uint8_t syndrome) noexcept {
        ++_c.naks_rx;
        if (_state != qp_state::ready) {
            return;
        }
        const aeth_type t = aeth_type_of(syndrome);
        if (t == aeth_type::rnr_nak) {
            ++_c.naks_rnr;
        } else if (t == aeth_type::nak && aeth_value_of(syndrome) == 0) {
            ++_c.naks_seq;
        } else {
            ++_c.naks_fatal;
            enter_error(qp_error::remote_nak);
            return;
        }
        const std::int64_t seq = to_seq(psn);
        if (seq > static_cast<std::int64_t>(_max)) {
            ++_c.naks_invalid;
            return;
        }
        if (seq < static_cast<std::int64_t>(_una)) {
            ++_c.naks_stale;
            return;
        }
        const auto x = static_cast<std::uint64_t>(seq);
        advance_una(now, x);
        if (t == aeth_type::rnr_nak) {
            if (_rnr_used >= _cfg.rnr_retry && _cfg.rnr_retry != 7) {
                enter_error(qp_error::rnr_retry_exceeded);
                return;
            }
            ++_rnr_used;
            _rnr_until = now + rnr_timer_of(aeth_value_of(syndrome));
            _timer_start = _rnr_until;
        } else {
            _timer_start = now;
        }
        rewind(x);
    }

    // Dispatch on the AETH of a received ACKNOWLEDGE packet.
    void on_aeth(nanos now, std::uint32_t psn, std::uint8_t syndrome, std::uint32_t msn) noexcept {
        if (aeth_is_ack(syndrome)) {
            on_ack(now, psn, msn);
        } else {
            on_nak(now, psn, syndrome);
        }
    }

    // Runs the local ACK timeout; returns the next deadline.
    nanos poll_timeout(nanos now) noexcept {
        if (_rnr_until.v != INT64_MIN && now >= _rnr_until) {
            _rnr_until = nanos{INT64_MIN};
        }
        if (_state == qp_state::ready && _una != _max && _timeout != nanos::max() &&
            now - _timer_start >= _timeout) {
            ++_c.timeouts;
            if (_retry_used >= _cfg.retry_cnt && !(_cfg.retry_infinite && _cfg.retry_cnt == 7)) {
                ++_c.retry_exceeded;
                enter_error(qp_error::retry_exceeded);
                return nanos::max();
            }
            ++_retry_used;
            _timer_start = now;
            rewind(_una);
        }
        return next_deadline();
    }

    // Earliest time the requester needs attention without any input: the
    // ACK timeout, or the end of an RNR wait. nanos::max() when none.
    nanos next_deadline() const noexcept {
        if (_state != qp_state::ready) {
            return nanos::max();
        }
        nanos d = nanos::max();
        if (_una != _max && _timeout != nanos::max()) {
            d = _timer_start + _timeout;
        }
        if (_rnr_until.v != INT64_MIN && _rnr_until < d && _nxt != _end) {
            d = _rnr_until;
        }
        return d;
    }

    // Oldest completion not yet taken; false when none.
    bool pop_completion(msg_completion& out) noexcept {
        if (_done_head == _done_tail) {
            return false;
        }
        out = _done[_done_head & _done_mask];
        ++_done_head;
        return true;
    }
    std::size_t completions_pending() const noexcept { return _done_tail - _done_head; }
    // The message table's slots (a power of two) and the completion ring's.
    std::size_t message_capacity() const noexcept { return _msgs.size(); }
    std::size_t completion_capacity() const noexcept { return _done.size(); }

    // True when next() would return a packet at `now`.
    bool can_send(nanos now) const noexcept {
        return _state == qp_state::ready && _nxt != _end && _nxt - _una < _cfg.window && now >= _rnr_until;
    }

    std::uint32_t snd_una_psn() const noexcept { return wire_psn(_una); }
    std::uint32_t snd_nxt_psn() const noexcept { return wire_psn(_nxt); }
    std::uint32_t snd_max_psn() const noexcept { return wire_psn(_max); }
    std::uint64_t outstanding() const noexcept { return _nxt - _una; }
    std::uint64_t unacked() const noexcept { return _max - _una; }
    std::uint64_t messages_in_flight() const noexcept { return _msg_tail - _msg_head; }
    std::uint32_t retries_used() const noexcept { return _retry_used; }
    qp_state state() const noexcept { return _state; }
    qp_error error() const noexcept { return _error; }
    const requester_counters& counters() const noexcept { return _c; }
    const qp_cfg& cfg() const noexcept { return _cfg; }

private:
    struct msg_slot {
        std::uint64_t id = 0;
        std::uint64_t size = 0;
        std::uint64_t first = 0;  // seq of the first packet
        nanos posted{};
        std::uint32_t npkts = 1;
    };

    static_assert(sizeof(msg_slot) + sizeof(msg_completion) == bytes_per_message_slot);

    static std::size_t round_pow2(std::uint32_t n) noexcept {
        std::size_t p = 1;
        while (p < n) {
            p <<= 1;
        }
        return p;
    }

    std::uint32_t wire_psn(std::uint64_t seq) const noexcept {
        return psn_add(_cfg.start_psn, static_cast<std::uint32_t>(seq));
    }
    // Absolute seq of a wire PSN, taken within 2^23 of snd_una.
    std::int64_t to_seq(std::uint32_t psn) const noexcept {
        return static_cast<std::int64_t>(_una) + psn_diff(psn & psn_mask, wire_psn(_una));
    }

    // Everything below `una` is acknowledged: complete messages, restart the
    // timer and the retry budgets.
    void advance_una(nanos now, std::uint64_t una) noexcept {
        if (una <= _una) {
            return;
        }
        _una = una;
        _retry_used = 0;
        _rnr_used = 0;
        _timer_start = now;
        while (_msg_head != _msg_tail) {
            const msg_slot& m = _msgs[_msg_head & _msg_mask];
            if (m.first + m.npkts > _una) {
                break;
            }
            complete(now, m);
            ++_msg_head;
        }
        if (_nxt < _una) {  // a late cumulative ACK overtook a rewind
            rewind(_una);
        }
    }

    void complete(nanos now, const msg_slot& m) noexcept {
        ++_completed_msgs;
        ++_c.messages_completed;
        _c.bytes_completed += m.size;
        const auto fct = static_cast<std::uint64_t>((now - m.posted).v);
        _c.fct_sum_ns += fct;
        if (fct > _c.fct_max_ns) {
            _c.fct_max_ns = fct;
        }
        if (_done_tail - _done_head == _done.size()) {
            ++_c.completions_dropped;
            return;
        }
        _done[_done_tail & _done_mask] = msg_completion{m.id, m.size, m.posted, now};
        ++_done_tail;
    }

    // snd_nxt = seq; find the message holding it (rare path: walks the
    // outstanding messages from the oldest).
    void rewind(std::uint64_t seq) noexcept {
        _nxt = seq;
        _cur = _msg_head;
        while (_cur != _msg_tail) {
            const msg_slot& m = _msgs[_cur & _msg_mask];
            if (m.first + m.npkts > _nxt) {
                break;
            }
            ++_cur;
        }
    }

    void enter_error(qp_error e) noexcept {
        _state = qp_state::error;
        _error = e;
    }

    // Hot state.
    std::uint64_t _una = 0;
    std::uint64_t _nxt = 0;
    std::uint64_t _max = 0;
    std::uint64_t _end = 0;  // one past the last packet of the last posted message
    std::uint64_t _cur = 0;  // message index holding _nxt (== _msg_tail when none)
    std::uint64_t _msg_head = 0;
    std::uint64_t _msg_tail = 0;
    nanos _timer_start{};
    nanos _rnr_until{INT64_MIN};
    std::uint32_t _retry_used = 0;
    std::uint32_t _rnr_used = 0;
    std::uint64_t _completed_msgs = 0;
    qp_state _state = qp_state::ready;
    qp_error _error = qp_error::none;

    qp_cfg _cfg;
    nanos _timeout;
    std::vector<msg_slot> _msgs;
    std::uint32_t _msg_mask;
    std::vector<msg_completion> _done;
    std::uint32_t _done_mask;
    std::uint64_t _done_head = 0;
    std::uint64_t _done_tail = 0;

    // Cold state.
    requester_counters _c{};
};

}  // namespace rocelab
