// The process's memory as Linux reports it (0 elsewhere, or where a field is missing).
#pragma once

#include <cstdint>

namespace brisk {

uint64_t resident_bytes();       // VmRSS: pages resident now, file-backed ones included
uint64_t peak_resident_bytes();  // VmHWM: the most resident at any time so far
uint64_t total_memory_bytes();   // MemTotal: the machine's

}  // namespace brisk
