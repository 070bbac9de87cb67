//! Shared test support: paths of the real peers that `tests/setup.sh` installs, and a temporary
//! `CAPABILITIES_HOME` per test.
