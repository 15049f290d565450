// gtest_main_skip77.cpp - the main() of every GoogleTest executable in tests/.
//
// meson (1.0.x) decides a gtest-protocol test's result from the exit code
// alone; GoogleTest exits 0 when a test called GTEST_SKIP, so a skipped
// check would show as OK. This main exits 77 (the GNU "skipped" code, which
// meson reports as SKIP) when nothing failed and at least one test skipped,
// and names each skipped test with its reason on stderr. A failure still
// wins: failing and skipped tests together exit 1.
#include <gtest/gtest.h>

#include <cstdio>

int main(int argc, char** argv) {
    ::testing::InitGoogleTest(&argc, argv);
    const int rc = RUN_ALL_TESTS();
    const ::testing::UnitTest& u = *::testing::UnitTest::GetInstance();
    if (rc != 0 || u.skipped_test_count() == 0) { return rc; }
    for (int s = 0; s < u.total_test_suite_count(); ++s) {
        const ::testing::TestSuite& ts = *u.GetTestSuite(s);
        for (int t = 0; t < ts.total_test_count(); ++t) {
            const ::testing::TestInfo& ti = *ts.GetTestInfo(t);
            if (!ti.result()->Skipped()) { continue; }
            std::string why;
            for (int k = 0; k < ti.result()->total_part_count(); ++k) {
                const auto& part = ti.result()->GetTestPartResult(k);
                if (part.skipped()) { why += part.message(); }
            }
            std::fprintf(stderr, "SKIP %s.%s: %s\n", ts.name(), ti.name(), why.c_str());
        }
    }
    std::fprintf(stderr, "%d test(s) skipped, none failed: exit 77 (meson SKIP)\n", u.skipped_test_count());
    return 77;
}
