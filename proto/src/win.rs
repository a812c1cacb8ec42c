//! The few Win32 calls tabwire's local channels need on Windows, each wrapped once with its
//! `unsafe` kept small: who a process runs as (its token's user SID), whether a process is
//! alive, the security descriptor that lets only this user open a named pipe, and the random
//! part of its name.

use std::io;
use std::ptr;

use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_ACCESS_DENIED, GetLastError, HANDLE, LocalFree, STILL_ACTIVE,
};
use windows_sys::Win32::Security::Authorization::{
    ConvertSidToStringSidW, ConvertStringSecurityDescriptorToSecurityDescriptorW, SDDL_REVISION_1,
};
use windows_sys::Win32::Security::{
    GetTokenInformation, PSECURITY_DESCRIPTOR, SECURITY_ATTRIBUTES, TOKEN_QUERY, TOKEN_USER,
    TokenUser,
};
use windows_sys::Win32::System::Threading::{
    GetCurrentProcess, GetExitCodeProcess, OpenProcess, OpenProcessToken,
    PROCESS_QUERY_LIMITED_INFORMATION,
};

/// A user's SID in its string form (`S-1-5-21-…`): what a pipe's DACL names and what two
/// processes' users are compared by (the string form of a SID is canonical).
pub type Sid = String;

/// A handle closed when dropped.
struct Owned(HANDLE);

impl Drop for Owned {
    fn drop(&mut self) {
        // SAFETY: the handle came from a successful Open* call and is closed only here.
        unsafe { CloseHandle(self.0) };
    }
}

/// `Ok(())` when a Win32 call returned TRUE, else the thread's last error.
fn check(ok: i32) -> io::Result<()> {
    if ok != 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

/// A wide string of `s`, NUL-terminated, for a `PCWSTR` argument.
fn wide(s: &str) -> Vec<u16> {
    s.encode_utf16().chain(std::iter::once(0)).collect()
}

/// Take a string the system allocated with `LocalAlloc`, and free it.
///
/// # Safety
/// `p` is a NUL-terminated UTF-16 string from `LocalAlloc`, not used again by the caller.
unsafe fn take_local_wide(p: *mut u16) -> String {
    // SAFETY: the caller promises a NUL-terminated string; we read up to the NUL.
    let len = (0..).take_while(|&i| unsafe { *p.add(i) } != 0).count();
    let s = String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(p, len) });
    // SAFETY: allocated by the system with LocalAlloc; freed once, here.
    unsafe { LocalFree(p.cast()) };
    s
}

/// The user this process runs as.
pub fn current_user() -> io::Result<Sid> {
    // SAFETY: GetCurrentProcess returns a pseudo-handle that needs no closing.
    token_user(unsafe { GetCurrentProcess() })
}

/// The user process `pid` runs as. Fails when the process is gone or may not be queried.
pub fn process_user(pid: u32) -> io::Result<Sid> {
    // SAFETY: plain call; a null handle is checked below.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        return Err(io::Error::last_os_error());
    }
    let process = Owned(process);
    token_user(process.0)
}

/// The user SID of `process`'s access token.
fn token_user(process: HANDLE) -> io::Result<Sid> {
    let mut token: HANDLE = ptr::null_mut();
    // SAFETY: `process` is a valid process handle; `token` receives a handle we then own.
    check(unsafe { OpenProcessToken(process, TOKEN_QUERY, &mut token) })?;
    let token = Owned(token);
    // A TOKEN_USER is followed in the same buffer by the SID it points to: ask for the size.
    let mut len = 0u32;
    // SAFETY: a null buffer of length 0 only asks for the needed length.
    unsafe { GetTokenInformation(token.0, TokenUser, ptr::null_mut(), 0, &mut len) };
    // u64s keep the buffer aligned for TOKEN_USER.
    let mut buf = vec![0u64; (len as usize).div_ceil(8).max(1)];
    // SAFETY: `buf` holds at least `len` bytes.
    check(unsafe {
        GetTokenInformation(token.0, TokenUser, buf.as_mut_ptr().cast(), len, &mut len)
    })?;
    // SAFETY: the call succeeded, so `buf` starts with a TOKEN_USER whose SID lies in `buf`.
    let sid = unsafe { (*buf.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    let mut text: *mut u16 = ptr::null_mut();
    // SAFETY: `sid` is valid while `buf` lives; `text` receives a LocalAlloc'd string.
    check(unsafe { ConvertSidToStringSidW(sid, &mut text) })?;
    // SAFETY: the string came from ConvertSidToStringSidW just now.
    Ok(unsafe { take_local_wide(text) })
}

/// 16 bytes from the system's random number generator, for names no one else can guess.
pub fn random_bytes() -> [u8; 16] {
    use windows_sys::Win32::Security::Cryptography::{
        BCRYPT_USE_SYSTEM_PREFERRED_RNG, BCryptGenRandom,
    };
    let mut bytes = [0u8; 16];
    // SAFETY: writes exactly bytes.len() bytes into `bytes`; no algorithm handle is needed
    // with BCRYPT_USE_SYSTEM_PREFERRED_RNG.
    let status = unsafe {
        BCryptGenRandom(
            ptr::null_mut(),
            bytes.as_mut_ptr(),
            bytes.len() as u32,
            BCRYPT_USE_SYSTEM_PREFERRED_RNG,
        )
    };
    // The system RNG fails only on a broken system; a guessable name would be worse than none.
    assert!(status >= 0, "the system random number generator failed (NTSTATUS {status:#x})");
    bytes
}

/// Whether process `pid` is running (it may belong to another user: then it cannot be opened
/// for querying, which still says it exists).
pub fn pid_alive(pid: u32) -> bool {
    if pid == 0 {
        return false;
    }
    // SAFETY: plain call; a null handle is checked below.
    let process = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if process.is_null() {
        // SAFETY: reads this thread's last error.
        return unsafe { GetLastError() } == ERROR_ACCESS_DENIED;
    }
    let process = Owned(process);
    let mut code = 0u32;
    // SAFETY: a valid process handle and an out-parameter.
    let ok = unsafe { GetExitCodeProcess(process.0, &mut code) };
    ok != 0 && code == STILL_ACTIVE as u32
}

/// A self-relative security descriptor from SDDL, freed when dropped. Windows only reads it
/// after creation, so it may be shared between threads.
pub struct SecurityDescriptor {
    raw: PSECURITY_DESCRIPTOR,
}

// SAFETY: the descriptor is never written after `from_sddl`; Windows only reads it.
unsafe impl Send for SecurityDescriptor {}
// SAFETY: as above.
unsafe impl Sync for SecurityDescriptor {}

impl SecurityDescriptor {
    /// A protected DACL (`P`: nothing inherited from a parent) with one entry: full access for
    /// `sid`, and so for no one else — not even SYSTEM or the administrators.
    pub fn only_for(sid: &str) -> io::Result<SecurityDescriptor> {
        Self::from_sddl(&format!("D:P(A;;GA;;;{sid})"))
    }

    fn from_sddl(sddl: &str) -> io::Result<SecurityDescriptor> {
        let text = wide(sddl);
        let mut raw: PSECURITY_DESCRIPTOR = ptr::null_mut();
        // SAFETY: `text` is NUL-terminated; `raw` receives a LocalAlloc'd descriptor we own.
        check(unsafe {
            ConvertStringSecurityDescriptorToSecurityDescriptorW(
                text.as_ptr(),
                SDDL_REVISION_1,
                &mut raw,
                ptr::null_mut(),
            )
        })?;
        Ok(SecurityDescriptor { raw })
    }

    /// Its DACL written back as SDDL, as Windows reads it.
    #[cfg(test)]
    pub fn dacl_sddl(&self) -> io::Result<String> {
        use windows_sys::Win32::Security::Authorization::ConvertSecurityDescriptorToStringSecurityDescriptorW;
        use windows_sys::Win32::Security::DACL_SECURITY_INFORMATION;
        let mut text: *mut u16 = ptr::null_mut();
        // SAFETY: `raw` is a valid descriptor; `text` receives a LocalAlloc'd string.
        check(unsafe {
            ConvertSecurityDescriptorToStringSecurityDescriptorW(
                self.raw,
                SDDL_REVISION_1,
                DACL_SECURITY_INFORMATION,
                &mut text,
                ptr::null_mut(),
            )
        })?;
        // SAFETY: the string came from the call above.
        Ok(unsafe { take_local_wide(text) })
    }

    /// `SECURITY_ATTRIBUTES` pointing at this descriptor (not inheritable), valid while `self`
    /// lives.
    pub fn attributes(&self) -> SECURITY_ATTRIBUTES {
        SECURITY_ATTRIBUTES {
            nLength: size_of::<SECURITY_ATTRIBUTES>() as u32,
            lpSecurityDescriptor: self.raw,
            bInheritHandle: 0,
        }
    }
}

impl Drop for SecurityDescriptor {
    fn drop(&mut self) {
        // SAFETY: allocated by ConvertStringSecurityDescriptorToSecurityDescriptorW; freed once.
        unsafe { LocalFree(self.raw) };
    }
}
