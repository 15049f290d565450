// header_view.hpp - the base of the wire-format header views (eth, vlan, ipv4,
// ipv6, udp, bth, arp, mac_control).
//
// A view is the address of a header's first byte and nothing else; B is
// std::byte for a view that may write, const std::byte for a read-only one.
// The views derive from header_view<B> for that pointer, their constructor
// and data(), and read and write their own fields at constant offsets
// (load_be16(_p + 2), ...). No virtual function: a view is one pointer, and
// its accessors inline to the same loads and stores as before.
//
//   template <typename B>
//   class basic_udp_view : public header_view<B> {
//   public:
//       using header_view<B>::header_view;
//       std::uint16_t sport() const noexcept { return load_be16(_p); }
//   private:
//       using header_view<B>::_p;
//   };
//
// Counters: none.
#pragma once

namespace rocelab {

template <typename B>
class header_view {
public:
    explicit header_view(B* p) noexcept : _p(p) {}
    B* data() const noexcept { return _p; }

protected:
    B* _p;
};

}  // namespace rocelab
