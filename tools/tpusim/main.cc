#include <iostream>

#include "tools/tpusim/tpusim.h"

int main(int argc, char** argv) {
  return trench::RunTpusim(argc, argv, std::cout, std::cerr);
}
