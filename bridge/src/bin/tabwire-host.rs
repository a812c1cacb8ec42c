//! `tabwire-host`, the native-messaging host Chrome starts: all of it is in the
//! `tabwire_host` library; this file only makes it a binary of this package.

fn main() -> std::process::ExitCode {
    tabwire_host::main()
}
