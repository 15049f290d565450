// config_pch.hpp - the precompiled header of lib/config (meson cpp_pch;
// -Db_pch=false turns it off). Every file of the library parses yaml-cpp,
// the standard containers and the loader's headers; parsed once per build
// tree instead of once per file, the library's 27 files took 74 s of CPU
// instead of 100 (gcc, release) and 58 s instead of 74 (clang, TSan). It
// only adds includes, and each file should still include what it uses: a
// file that forgets one compiles here anyway, and fails only in a tree
// configured with -Db_pch=false.

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "config/loader.hpp"
#include "config/tables/tables.hpp"
