#include <iostream>

#include "tools/hlo-diff/hlo_diff.h"

int main(int argc, char** argv) {
  return trench::RunHloDiff(argc, argv, std::cout, std::cerr);
}
