//! The one integration test binary (`autotests = false`): every suite is a module here.

mod common;
