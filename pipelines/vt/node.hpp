// node.hpp - what a fabric holds: a switch or a generator pipeline behind
// one interface (issue 20 item 1).
//
// A node is one pipeline with its configuration. The fabric polls it as one
// or more *units*, each an engine node of its own (sim/engine.hpp): a
// switch is one unit; a generator is one unit per host, that is per worker
// of the pipeline (the host's NIC ports: one, or one per plane), so 64 hosts
// are 64 units, each polled only when something is due for it.
//
//   poll(unit, now)           the unit's work at `now` (a burst per port);
//                             returns the frames it moved (0: nothing)
//   next_deadline(unit, now)  when the unit next has work of its own
//                             (nanos::max(): only an arrival gives it work)
//   ports(), port(i)          its ports as the pipeline binds them (name,
//                             MAC, line rate, the simulated port's I/O)
//   release()                 every mbuf the pipeline holds back to its pool
//   visit(v)                  the pipeline and its configuration, typed, to
//                             whoever reads it (reports, metrics, tests):
//                             v.on_switch(...) or v.on_gen(...)
//
// The fabric (fabric.cpp) wraps each unit as a sim::sim_node, adds the
// simulated ports' own deadlines (frames waiting in an RX ring, a TX ring
// that refused frames), and partitions units over threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "config/gen_config.hpp"
#include "config/switch_cfg.hpp"
#include "core/units.hpp"
#include "gen/gen_pipeline.hpp"
#include "switch/switch_pipeline.hpp"

namespace rocelab::vt {

enum class node_kind : std::uint8_t { switch_node, gen_node };

// Typed access to a node's pipeline (the one place that names both kinds).
struct node_visitor {
    virtual ~node_visitor() = default;
    virtual void on_switch(sw::switch_pipeline& p, const switch_cfg& cfg) = 0;
    virtual void on_gen(gen::gen_pipeline& p, const gen_cfg& cfg) = 0;
};

class node {
public:
    virtual ~node() = default;
    virtual node_kind kind() const noexcept = 0;
    virtual std::size_t units() const noexcept = 0;
    virtual std::uint32_t poll(std::size_t unit, nanos now) noexcept = 0;
    virtual nanos next_deadline(std::size_t unit, nanos now) noexcept = 0;
    // Real time from now on: every round polls every unit, so no one asks
    // next_deadline again (a pipeline may drop what it keeps for it).
    virtual void polled_continuously() noexcept {}
    virtual std::size_t ports() const noexcept = 0;
    virtual const dpdk::port_binding& port(std::size_t i) const noexcept = 0;
    virtual void release() noexcept = 0;
    virtual void visit(node_visitor& v) = 0;
};

// What both kinds share: the pipeline, owned, and the configuration it was
// built from; its ports and mbufs, which every pipeline exposes alike.
template <typename Pipeline, typename Cfg>
class pipeline_node : public node {
public:
    pipeline_node(std::unique_ptr<Pipeline> p, const Cfg& cfg) : _p(std::move(p)), _cfg(cfg) {}
    std::size_t ports() const noexcept final { return _p->port_count(); }
    const dpdk::port_binding& port(std::size_t i) const noexcept final { return _p->binding(i); }
    void release() noexcept final { _p->release_all(); }
    Pipeline& pipe() noexcept { return *_p; }

protected:
    std::unique_ptr<Pipeline> _p;
    const Cfg& _cfg;  // the fabric's description of the node (outlives it)
};

// A switch: one unit (in a fabric the switch runs one worker).
class switch_node final : public pipeline_node<sw::switch_pipeline, switch_cfg> {
public:
    using pipeline_node::pipeline_node;
    node_kind kind() const noexcept override { return node_kind::switch_node; }
    std::size_t units() const noexcept override { return 1; }
    std::uint32_t poll(std::size_t, nanos now) noexcept override { return _p->poll(now); }
    nanos next_deadline(std::size_t, nanos now) noexcept override { return _p->next_deadline(now); }
    void visit(node_visitor& v) override { v.on_switch(*_p, _cfg); }
};

// A generator: one unit per worker (per host, or per server over planes);
// its configuration as expanded (hosts and flows).
class gen_node final : public pipeline_node<gen::gen_pipeline, gen_cfg> {
public:
    using pipeline_node::pipeline_node;
    node_kind kind() const noexcept override { return node_kind::gen_node; }
    std::size_t units() const noexcept override { return _p->worker_count(); }
    std::uint32_t poll(std::size_t unit, nanos now) noexcept override { return _p->poll_worker(unit, now); }
    nanos next_deadline(std::size_t unit, nanos now) noexcept override { return _p->next_deadline_worker(unit, now); }
    void polled_continuously() noexcept override { _p->poll_continuously(); }
    void visit(node_visitor& v) override { v.on_gen(*_p, _cfg); }
};

}  // namespace rocelab::vt
