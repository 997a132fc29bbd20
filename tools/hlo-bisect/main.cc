#include <iostream>

#include "tools/hlo-bisect/hlo_bisect.h"

int main(int argc, char** argv) {
  return trench::RunHloBisect(argc, argv, std::cout, std::cerr);
}
