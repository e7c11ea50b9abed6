// SPDX-License-Identifier: MIT
// Container churn for the benchmarks, the way C++ programs use the heap: a
// std::map of std::string keys to std::vector values, grown, looked up and
// erased in rounds, strings built and dropped, a vector of strings sorted.
// Every run makes the same calls (fixed-seed PRNG). With --loop, the
// smallest C++ loop instead: N times a std::vector and a std::string made and
// dropped, four heap calls that repeat exactly (heaptrack's trace of it is
// almost nothing but its 10 ms time stamps; bench/README.md, "Trace size:
// format 1.6").
// usage: bench_containers [ROUNDS]   (default 200)
//        bench_containers --loop N
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace
{

unsigned long long rng_state = 88172645463325252ULL;

unsigned rnd(unsigned n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return static_cast<unsigned>(rng_state % n);
}

std::string make_key(unsigned i)
{
    // Past 15 characters a std::string leaves its small buffer: mix both.
    std::string s = "key-";
    s += std::to_string(i);
    if (i % 3 == 0)
        s += "-with-a-longer-suffix";
    return s;
}

} // namespace

static int loop(unsigned long n)
{
    std::size_t sum = 0;

    for (unsigned long i = 0; i < n; i++) {
        std::vector<int> v(100, static_cast<int>(i));
        std::string s(40, 'x');
        sum += v.size() + s.size();
    }
    std::printf("%zu\n", sum);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && !std::strcmp(argv[1], "--loop"))
        return loop(std::strtoul(argv[2], nullptr, 10));
    unsigned rounds = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 200;
    std::map<std::string, std::vector<int>> table;
    std::unordered_map<std::string, unsigned> counts;
    unsigned long long sum = 0;

    for (unsigned r = 0; r < rounds; r++) {
        for (unsigned i = 0; i < 500; i++) {
            std::vector<int> &v = table[make_key(rnd(4000))];
            for (unsigned j = rnd(20); j > 0; j--)
                v.push_back(static_cast<int>(j));
        }
        for (unsigned i = 0; i < 300; i++) {
            auto it = table.find(make_key(rnd(4000)));
            if (it != table.end()) {
                sum += it->second.size();
                counts[it->first]++;
                if (rnd(2))
                    table.erase(it);
            }
        }
        std::vector<std::string> words;
        for (unsigned i = 0; i < 200; i++)
            words.push_back(make_key(rnd(100000)) + "/" + std::to_string(r));
        std::sort(words.begin(), words.end());
        sum += words.front().size();
    }
    std::printf("%zu %zu %llu\n", table.size(), counts.size(), sum);
    return 0;
}
