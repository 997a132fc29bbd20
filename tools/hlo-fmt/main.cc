#include <iostream>

#include "tools/hlo-fmt/hlo_fmt.h"

int main(int argc, char** argv) {
  return trench::RunHloFmt(argc, argv, std::cout, std::cerr);
}
