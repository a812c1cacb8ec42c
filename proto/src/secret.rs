//! The one comparison of a secret a client presents (a loopback server's bearer token, the fast
//! link's URL token) with the one the program holds.

use subtle::ConstantTimeEq;

/// Whether `given` is `secret`, in time that does not depend on where the first difference is,
/// so timing tells a guesser nothing. (A length difference answers at once: tabwire's secrets
/// have one fixed length, which is no secret.)
pub fn matches(given: &[u8], secret: &[u8]) -> bool {
    given.ct_eq(secret).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_same_bytes_match() {
        assert!(matches(b"s3cret", b"s3cret"));
        for other in [&b"s3cre"[..], b"s3cret!", b"S3cret", b"", b"s3creu"] {
            assert!(!matches(other, b"s3cret"), "{other:?}");
        }
    }
}
