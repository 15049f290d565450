// result.hpp - an expected-like return type for the control path.
//
// Config loading and parsing never throw across the API. Each fallible
// function returns result<T>: either the finished value or one config_error
// whose message is ready to print (for a file: "path:line:column: TABLE|key|
// field: what was given, and what is accepted"). The caller decides what to do
// with it; rocelab's apps print it and exit with status 2.
//
//   auto r = load_switch_cfg("conf/l3-leaf-ecmp.yaml");
//   if (!r) { std::fprintf(stderr, "%s\n", r.error().message.c_str()); return 2; }
//   const switch_cfg& cfg = *r;
#pragma once

#include <string>
#include <utility>
#include <variant>

namespace rocelab {

struct config_error {
    std::string message;
};

template <class T>
class [[nodiscard]] result {
public:
    result(T value) : _v(std::in_place_index<0>, std::move(value)) {}
    result(config_error error) : _v(std::in_place_index<1>, std::move(error)) {}

    bool ok() const noexcept { return _v.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }

    // Precondition: ok().
    T& value() & { return std::get<0>(_v); }
    const T& value() const& { return std::get<0>(_v); }
    T&& value() && { return std::get<0>(std::move(_v)); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }

    // Precondition: !ok().
    const config_error& error() const& { return std::get<1>(_v); }

private:
    std::variant<T, config_error> _v;
};

}  // namespace rocelab
