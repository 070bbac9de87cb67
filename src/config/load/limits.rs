//! The tables that bound what runs may do and keep: `[credentials]`, `[limits]` (which may only
//! lower the built-in caps), `[hub]`'s pacing, and how long runs are kept.

use std::time::Duration;

use toml::Spanned;

use super::super::Pacing;
use super::super::options::{CredentialsOptions, HubOptions, LimitsOptions};
use super::super::settings::hub_pacing;
use super::{ConfigError, Ctx};
use crate::credentials::StoreKind;
use crate::runs::Retention;
use crate::sandbox::Limits;

impl Ctx<'_> {
    pub(super) fn credential_store(
        &self,
        options: &CredentialsOptions,
    ) -> Result<StoreKind, ConfigError> {
        match &options.store {
            None => Ok(StoreKind::Keychain),
            Some(store) => store.get_ref().parse().map_err(|e: String| {
                self.at(
                    store,
                    format!("credentials.store: {e}"),
                    "write `store = \"keychain\"` or `store = \"file\"`",
                )
            }),
        }
    }

    /// A `[limits]` value: the default when absent; never 0, never above the default (`max`).
    /// `unit` is what one of the config's numbers is worth in the default's unit.
    pub(super) fn cap(
        &self,
        value: &Option<Spanned<u64>>,
        max: u64,
        unit: u64,
        key: &str,
    ) -> Result<u64, ConfigError> {
        match value {
            None => Ok(max),
            Some(v) => {
                let raw = *v.get_ref();
                let bytes = raw.saturating_mul(unit);
                if raw == 0 {
                    Err(self.at(
                        v,
                        format!("limits.{key} must be greater than 0"),
                        format!("remove it for the default of {}", max / unit),
                    ))
                } else if bytes > max {
                    Err(self.at(
                        v,
                        format!(
                            "limits.{key} = {raw} is above the built-in maximum of {}",
                            max / unit
                        ),
                        "limits may lower the defaults, never raise them",
                    ))
                } else {
                    Ok(bytes)
                }
            }
        }
    }

    pub(super) fn limits(&self, options: &LimitsOptions) -> Result<Limits, ConfigError> {
        let d = Limits::default();
        Ok(Limits {
            run_timeout: Duration::from_secs(self.cap(
                &options.run_timeout_secs,
                d.run_timeout.as_secs(),
                1,
                "run_timeout_secs",
            )?),
            max_calls: self.cap(&options.max_calls, d.max_calls, 1, "max_calls")?,
            memory_bytes: self.cap(&options.memory_mib, d.memory_bytes, 1 << 20, "memory_mib")?,
            stack_bytes: self.cap(&options.stack_kib, d.stack_bytes, 1 << 10, "stack_kib")?,
            result_bytes: self.cap(&options.result_bytes, d.result_bytes, 1, "result_bytes")?,
            log_bytes: self.cap(&options.log_bytes, d.log_bytes, 1, "log_bytes")?,
            code_bytes: self.cap(&options.code_bytes, d.code_bytes, 1, "code_bytes")?,
            final_value_bytes: self.cap(
                &options.final_value_bytes,
                d.final_value_bytes,
                1,
                "final_value_bytes",
            )?,
            tool_result_bytes: self.cap(
                &options.tool_result_bytes,
                d.tool_result_bytes,
                1,
                "tool_result_bytes",
            )?,
        })
    }

    /// `[hub]`: `max_starting` at least 1; `idle_stop_secs = 0` never stops a source.
    pub(super) fn pacing(&self, options: &HubOptions) -> Result<Pacing, ConfigError> {
        let max_starting = match &options.max_starting {
            Some(v) if *v.get_ref() == 0 => {
                return Err(self.at(
                    v,
                    "hub.max_starting must be at least 1",
                    "remove it to start one source per core at a time",
                ));
            }
            Some(v) => Some(usize::try_from(*v.get_ref()).unwrap_or(usize::MAX)),
            None => None,
        };
        let mut pacing = hub_pacing(max_starting);
        if let Some(v) = &options.idle_stop_secs {
            pacing.idle_stop = match *v.get_ref() {
                0 => None,
                secs => Some(Duration::from_secs(secs)),
            };
        }
        Ok(pacing)
    }

    pub(super) fn retention(&self, options: &LimitsOptions) -> Result<Retention, ConfigError> {
        let d = Retention::default();
        Ok(Retention {
            max_results: self.cap(&options.stored_results, d.max_results, 1, "stored_results")?,
            max_bytes: self.cap(&options.stored_kib, d.max_bytes, 1 << 10, "stored_kib")?,
            ttl: Duration::from_secs(self.cap(
                &options.stored_ttl_secs,
                d.ttl.as_secs(),
                1,
                "stored_ttl_secs",
            )?),
        })
    }
}
