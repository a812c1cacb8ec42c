/* Wine 8.0 has no bcryptprimitives.dll, and Rust's standard library (1.78 and later) imports
 * ProcessPrng from it on Windows, so no Rust program loads under that Wine. This stand-in,
 * placed beside the .exe, gives ProcessPrng from advapi32's RtlGenRandom (SystemFunction036),
 * which Wine has. scripts/windows.sh builds it; it is for running tests under Wine only. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

/* ProcessPrng(PBYTE, SIZE_T) -> BOOL; always TRUE on Windows. RtlGenRandom takes a ULONG
 * length, so longer requests go in parts. */
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG part = length > 0x7fffffff ? 0x7fffffff : (ULONG)length;
        if (!SystemFunction036(data, part)) return FALSE;
        data += part;
        length -= part;
    }
    return TRUE;
}
