#pragma once

// On a crash (SIGSEGV, SIGABRT — glibc's "double free or corruption" ends that way —, SIGBUS,
// SIGFPE, SIGILL), prints which program crashed and its stack on stderr before the process ends
// as it would have (the signal's default action: a core file where the system keeps them). The
// frames are "binary(+0xoffset)" where a symbol is not exported; `addr2line -Cfe BINARY OFFSET`
// on the same build names the function and line. A crash seen once on a CI machine is then a
// bug report, not a mystery.

namespace Starforge {

// Once per process, early in main().
void printStackOnCrash(const char *programName);

} // namespace Starforge
