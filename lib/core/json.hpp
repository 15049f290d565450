// json.hpp - a tiny streaming JSON writer for reports (control path only).
//
//   json_writer j(out);
//   j.begin_object(); j.key("version"); j.value("0.1.0"); j.end_object();
//
// Commas and string escaping are handled; numbers are written exactly.
#pragma once

#include <cinttypes>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace rocelab {

class json_writer {
public:
    explicit json_writer(std::string& out) : _out(out) {}
    void begin_object() { pre(); _out += '{'; _first.push_back(true); }
    void end_object() { _first.pop_back(); nl(); _out += '}'; }
    void begin_array() { pre(); _out += '['; _first.push_back(true); }
    void end_array() { _first.pop_back(); nl(); _out += ']'; }
    void key(std::string_view k) {
        pre();
        str(k);
        _out += ": ";
        _after_key = true;
    }
    void value(std::string_view s) { pre(); str(s); }
    void value(const char* s) { value(std::string_view(s)); }
    void value(const std::string& s) { value(std::string_view(s)); }
    void value(bool b) { pre(); _out += b ? "true" : "false"; }
    void null_value() { pre(); _out += "null"; }
    void value(std::uint64_t v) { pre(); _out += std::to_string(v); }
    void value(std::int64_t v) { pre(); _out += std::to_string(v); }
    void value(unsigned v) { value(static_cast<std::uint64_t>(v)); }
    void value(int v) { value(static_cast<std::int64_t>(v)); }
    void value(double d) {
        pre();
        char b[64];
        std::snprintf(b, sizeof b, "%.9g", d);
        _out += b;
    }
    template <typename T>
    void kv(std::string_view k, const T& v) { key(k); value(v); }

private:
    void nl() {
        _out += '\n';
        _out.append(_first.size() * 2, ' ');
    }
    void pre() {
        if (_after_key) { _after_key = false; return; }
        if (_first.empty()) { return; }
        if (!_first.back()) { _out += ','; }
        _first.back() = false;
        nl();
    }
    void str(std::string_view s) {
        _out += '"';
        for (char c : s) {
            switch (c) {
                case '"': _out += "\\\""; break;
                case '\\': _out += "\\\\"; break;
                case '\n': _out += "\\n"; break;
                case '\t': _out += "\\t"; break;
                default:
                    if (static_cast<unsigned char>(c) < 0x20) {
                        char b[8];
                        std::snprintf(b, sizeof b, "\\u%04x", c);
                        _out += b;
                    } else {
                        _out += c;
                    }
            }
        }
        _out += '"';
    }
    std::string& _out;
    std::vector<bool> _first;
    bool _after_key = false;
};

}  // namespace rocelab
