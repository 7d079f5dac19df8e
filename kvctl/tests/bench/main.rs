//! The benchmark runner as a library (`kvctl::bench`): W1 and W2 at small sizes, their
//! reports and JSON. One test binary, one module per workload.

mod w1;
mod w2;
