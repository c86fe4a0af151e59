//! Model choice from `modelPreferences`: hints matched in order against the configured model
//! names (substring, case-insensitive), then cost/speed/intelligence priorities against each
//! model's attributes.

use super::types::ModelPreferences;

pub use crate::config::sampling::ModelSpec;

pub fn choose(preferences: Option<&ModelPreferences>, models: &[ModelSpec]) -> Option<String> {
    if models.is_empty() {
        return None;
    }
    let prefs = preferences.cloned().unwrap_or_default();
    for hint in prefs.hints.iter().flatten() {
        let Some(name) = hint.name.as_deref().map(str::to_lowercase) else {
            continue;
        };
        if let Some(m) = models
            .iter()
            .find(|m| m.name.to_lowercase().contains(&name))
        {
            return Some(m.name.clone());
        }
    }
    let weights = (
        prefs.cost_priority.unwrap_or(0.0),
        prefs.speed_priority.unwrap_or(0.0),
        prefs.intelligence_priority.unwrap_or(0.0),
    );
    let score =
        |m: &ModelSpec| weights.0 * m.cost + weights.1 * m.speed + weights.2 * m.intelligence;
    models
        .iter()
        .enumerate()
        .max_by(|(ia, a), (ib, b)| score(a).total_cmp(&score(b)).then(ib.cmp(ia)))
        .map(|(_, m)| m.name.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn models() -> Vec<ModelSpec> {
        serde_json::from_value(json!([
            {"name": "llama3.2:1b", "cost": 1.0, "speed": 1.0, "intelligence": 0.2},
            {"name": "gpt-4o-mini", "cost": 0.8, "speed": 0.8, "intelligence": 0.6},
            {"name": "claude-3-5-sonnet", "cost": 0.3, "speed": 0.5, "intelligence": 0.9}
        ]))
        .unwrap()
    }

    #[test]
    fn hints_first_then_priorities() {
        let p = |v| serde_json::from_value::<ModelPreferences>(v).unwrap();
        assert_eq!(
            choose(
                Some(&p(
                    json!({"hints": [{"name": "gemini"}, {"name": "Sonnet"}]})
                )),
                &models()
            )
            .as_deref(),
            Some("claude-3-5-sonnet")
        );
        assert_eq!(
            choose(Some(&p(json!({"intelligencePriority": 1.0}))), &models()).as_deref(),
            Some("claude-3-5-sonnet")
        );
        assert_eq!(
            choose(
                Some(&p(json!({"costPriority": 1.0, "speedPriority": 0.5}))),
                &models()
            )
            .as_deref(),
            Some("llama3.2:1b")
        );
        assert_eq!(
            choose(None, &models()).as_deref(),
            Some("llama3.2:1b"),
            "no preference: the first"
        );
        assert_eq!(choose(None, &[]), None);
    }
}
