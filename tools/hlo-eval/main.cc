#include <iostream>

#include "tools/hlo-eval/hlo_eval.h"

int main(int argc, char** argv) {
  return trench::RunHloEval(argc, argv, std::cout, std::cerr);
}
