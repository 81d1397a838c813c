// The program that builds the tests' precompiled header (tests/CMakeLists.txt, regionprof_test_pch).
int main() { return 0; }
