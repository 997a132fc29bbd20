// Where the tests read the production-trace corpus: the copy that ships in
// the repository (corpus/traces), so that a fresh clone has it.
#pragma once

#ifndef TRENCH_TRACES_DIR
#define TRENCH_TRACES_DIR TRENCH_SOURCE_DIR "/corpus/traces"
#endif
