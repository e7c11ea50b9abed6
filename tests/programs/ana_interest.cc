// SPDX-License-Identifier: MIT
// Rows that reach the user's code (issue 59, item 2): every allocation of
// this program is made inside libstdc++'s containers, six or more std::
// frames below the function that asked for it. load_catalog() fills a
// std::map<std::string, std::vector<int>>, load_names() a
// std::unordered_map<int, std::string>; each row of `report` must name one
// of them within the frames it prints (tests/e2e/ana_interest.sh).
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

const int NR_ENTRIES = 500;

std::map<std::string, std::vector<int>> load_catalog()
{
    std::map<std::string, std::vector<int>> catalog;

    for (int i = 0; i < NR_ENTRIES; i++) {
        std::vector<int> &v = catalog["catalog entry number " + std::to_string(i)];
        for (int k = 0; k < 9; k++)
            v.push_back(i * k);
    }
    return catalog;
}

std::unordered_map<int, std::string> load_names()
{
    std::unordered_map<int, std::string> names;

    for (int i = 0; i < NR_ENTRIES; i++)
        names[i] = "a name long enough for the heap " + std::to_string(i);
    return names;
}

}  // namespace

int main()
{
    std::map<std::string, std::vector<int>> catalog = load_catalog();
    std::unordered_map<int, std::string> names = load_names();

    std::printf("ana_interest: %zu entries, %zu names\n", catalog.size(), names.size());
    return 0;
}
