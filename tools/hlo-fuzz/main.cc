#include <iostream>

#include "tools/hlo-fuzz/hlo_fuzz.h"

int main(int argc, char** argv) {
  return trench::RunHloFuzz(argc, argv, std::cout, std::cerr);
}
