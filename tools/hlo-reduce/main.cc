#include <iostream>

#include "tools/hlo-reduce/hlo_reduce.h"

int main(int argc, char** argv) {
  return trench::RunHloReduce(argc, argv, std::cout, std::cerr);
}
