//! A bridge's synchronous connection to a host's named pipe on Windows, with what the tests use
//! of a Unix socket ([`std::os::unix::net::UnixStream`] on Unix): `connect`, blocking reads
//! and writes, and a read timeout. A pipe opened as a file has no timeout of its own, so a read
//! waits, looking every millisecond, until bytes are there (`PeekNamedPipe`) — and reads
//! nothing before it is asked to, as a socket does, which the tests of a bridge that stops
//! reading rely on.

use std::cell::Cell;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::windows::io::AsRawHandle;
use std::path::Path;
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation::{ERROR_BROKEN_PIPE, ERROR_FILE_NOT_FOUND, ERROR_PIPE_BUSY};
use windows_sys::Win32::System::Pipes::{PeekNamedPipe, WaitNamedPipeW};

/// How long [`PipeStream::connect`] retries while every instance of the pipe is taken (the
/// host makes the next one after each accept).
const BUSY_PATIENCE: Duration = Duration::from_secs(10);

/// Whether a pipe named `path` exists, asked without opening it: opening a pipe, as
/// `Path::exists` does, takes the instance that waits for the next client (and under Wine
/// says it is not there). A pipe whose instances are all taken exists too.
pub fn exists(path: &Path) -> bool {
    use std::os::windows::ffi::OsStrExt;
    let name: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    // SAFETY: a NUL-terminated name that lives across the call.
    if unsafe { WaitNamedPipeW(name.as_ptr(), 1) } != 0 {
        return true;
    }
    io::Error::last_os_error().raw_os_error() != Some(ERROR_FILE_NOT_FOUND as i32)
}

/// A client end of a named pipe.
#[derive(Debug)]
pub struct PipeStream {
    file: File,
    read_timeout: Cell<Option<Duration>>,
}

impl PipeStream {
    /// Open the pipe `path` (`\\.\pipe\…`) for reading and writing.
    pub fn connect(path: &Path) -> io::Result<PipeStream> {
        let deadline = Instant::now() + BUSY_PATIENCE;
        loop {
            match File::options().read(true).write(true).open(path) {
                Ok(file) => return Ok(PipeStream { file, read_timeout: Cell::new(None) }),
                Err(e)
                    if e.raw_os_error() == Some(ERROR_PIPE_BUSY as i32)
                        && Instant::now() < deadline =>
                {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// As `UnixStream::set_read_timeout`: `None` waits for ever; a read that times out is
    /// `TimedOut`.
    pub fn set_read_timeout(&self, timeout: Option<Duration>) -> io::Result<()> {
        self.read_timeout.set(timeout);
        Ok(())
    }

    /// Bytes waiting in the pipe; `None` once the host closed its end.
    fn available(&self) -> io::Result<Option<u32>> {
        let mut available = 0u32;
        // SAFETY: the handle is this file's, open for as long as `self`; no buffer is passed,
        // only the count of waiting bytes is written, into a local.
        let ok = unsafe {
            PeekNamedPipe(
                self.file.as_raw_handle(),
                std::ptr::null_mut(),
                0,
                std::ptr::null_mut(),
                &mut available,
                std::ptr::null_mut(),
            )
        };
        if ok != 0 {
            return Ok(Some(available));
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() == Some(ERROR_BROKEN_PIPE as i32) { Ok(None) } else { Err(e) }
    }
}

impl Read for PipeStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let deadline = self.read_timeout.get().map(|t| Instant::now() + t);
        loop {
            match self.available()? {
                None => return Ok(0), // end of stream, as a closed socket reads
                Some(0) => {}
                Some(_) => return self.file.read(buf),
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "no bytes from the pipe"));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Write for PipeStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}
