//! The one integration-test binary: each module drives the real `capabilities` binary or the
//! library against real peers (server-everything from npm, Python MCP servers from the venv).

// A test's helpers unwrap what the test set up: a failure there is the test failing, loudly.
#![allow(clippy::unwrap_used)]

mod approval_page;
mod approvals;
mod at_rest;
mod catalogue;
mod cli;
mod common;
mod conventions;
mod credentials;
mod dashboard;
mod direct;
mod direct_guarantees;
mod elicitation;
mod exec;
mod freshness;
mod generated;
mod guarantees;
mod hub;
mod hub_http;
mod install;
mod large_results;
mod live_catalog;
mod logging;
mod oauth;
mod openapi;
mod openapi_prism;
mod policy;
mod profiles;
mod raw;
mod reaping;
mod recovery;
mod redaction;
mod sandbox_hostile;
mod sandbox_prelude;
mod sandbox_results;
mod search_eval;
mod search_quality;
mod shared_store;
mod skills;
mod sources;
mod structure;
mod support;
mod terminal;
mod tls;
