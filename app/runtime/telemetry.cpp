#include "runtime/telemetry.hpp"

#include <cstdio>

namespace rocelab::runtime {

namespace {
void (*attached_detach)() = nullptr;  // control thread only
}  // namespace

void set_detach(void (*detach)()) { attached_detach = detach; }

void telemetry_detach() {
    if (attached_detach != nullptr) {
        attached_detach();
        attached_detach = nullptr;
    }
}

void register_commands(std::span<const tel_command> cmds, const char* prog) {
    for (const tel_command& c : cmds) {
        if (rte_telemetry_register_cmd(c.name, c.fn, c.help) != 0) {
            std::fprintf(stderr, "%s: warning: cannot register telemetry command %s\n", prog, c.name);
        }
    }
}

}  // namespace rocelab::runtime
