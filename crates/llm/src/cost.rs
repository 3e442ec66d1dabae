//! Prices per million tokens and the cost of one call.
//!
//! Deserialises from the `[prices]` table of the config (`{model: {input_per_mtok,
//! output_per_mtok, cached_input_per_mtok}}`). Lookup is by the exact model name sent; an
//! unknown model costs `None`, never 0, so a run's total cost is unknown rather than wrong.
//!
//! Cached prompt tokens (OpenAI `prompt_tokens_details.cached_tokens`, Anthropic
//! `cache_read_input_tokens`, Gemini `cachedContentTokenCount`) are billed at
//! `cached_input_per_mtok` (input price when absent). Anthropic cache *writes* are billed as
//! plain input here (Anthropic charges them 1.25×): a small, documented under-estimate.

use crate::error::LlmError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use tauguard_core::message::Usage;

/// US dollars per million tokens for one model.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelPrice {
    pub input_per_mtok: f64,
    pub output_per_mtok: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_input_per_mtok: Option<f64>,
}

impl ModelPrice {
    /// Dollars for `usage`; `cached_prompt_tokens` is taken as a subset of `prompt_tokens`.
    pub fn cost(&self, usage: &Usage) -> f64 {
        let cached = usage.cached_prompt_tokens.min(usage.prompt_tokens);
        let fresh = usage.prompt_tokens - cached;
        let cached_price = self.cached_input_per_mtok.unwrap_or(self.input_per_mtok);
        (fresh as f64 * self.input_per_mtok
            + cached as f64 * cached_price
            + usage.completion_tokens as f64 * self.output_per_mtok)
            / 1_000_000.0
    }
}

/// Model name → price.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PriceTable(pub BTreeMap<String, ModelPrice>);

impl PriceTable {
    pub fn get(&self, model: &str) -> Option<&ModelPrice> {
        self.0.get(model)
    }

    /// Dollars for `usage` on `model`; `None` when the model has no price.
    pub fn cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        self.get(model).map(|p| p.cost(usage))
    }

    pub fn insert(&mut self, model: impl Into<String>, price: ModelPrice) {
        self.0.insert(model.into(), price);
    }

    /// Rejects negative or non-finite prices.
    pub fn validate(&self) -> Result<(), LlmError> {
        for (model, p) in &self.0 {
            let prices = [
                Some(p.input_per_mtok),
                Some(p.output_per_mtok),
                p.cached_input_per_mtok,
            ];
            if prices
                .into_iter()
                .flatten()
                .any(|x| !(x.is_finite() && x >= 0.0))
            {
                return Err(LlmError::Config(format!(
                    "prices.`{model}`: prices must be non-negative numbers"
                )));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_tokens_are_billed_at_the_cached_price() {
        let p = ModelPrice {
            input_per_mtok: 2.0,
            output_per_mtok: 8.0,
            cached_input_per_mtok: Some(0.5),
        };
        let u = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 500_000,
            cached_prompt_tokens: 400_000,
        };
        let expected = 0.6 * 2.0 + 0.4 * 0.5 + 0.5 * 8.0;
        assert!((p.cost(&u) - expected).abs() < 1e-12);
    }

    #[test]
    fn unknown_model_costs_none_and_toml_parses() {
        let table: PriceTable = toml::from_str(
            r#"
            ["gpt-4.1-2025-04-14"]
            input_per_mtok = 2.0
            output_per_mtok = 8.0
            cached_input_per_mtok = 0.5
            ["claude-x"]
            input_per_mtok = 3
            output_per_mtok = 15
            "#,
        )
        .expect("price table parses");
        let u = Usage {
            prompt_tokens: 10,
            completion_tokens: 1,
            cached_prompt_tokens: 0,
        };
        assert!(table.cost("gpt-4.1-2025-04-14", &u).is_some());
        assert_eq!(
            table.get("claude-x").and_then(|p| p.cached_input_per_mtok),
            None
        );
        assert_eq!(table.cost("unknown", &u), None);
        assert!(table.validate().is_ok());
    }
}
