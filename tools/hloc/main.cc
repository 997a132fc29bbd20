#include <iostream>

#include "tools/hloc/hloc.h"

int main(int argc, char** argv) {
  return trench::RunHloc(argc, argv, std::cout, std::cerr);
}
