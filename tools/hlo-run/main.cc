#include <iostream>

#include "tools/hlo-run/hlo_run.h"

int main(int argc, char** argv) {
  return trench::RunHloRun(argc, argv, std::cin, std::cout, std::cerr);
}
