//! Which of a claim's jobs are taken begun: the first `begin_each` of each
//! tenant's, in the order the claim takes them (`ClaimParams::begin_each`).

use std::collections::HashMap;

pub struct Begun {
    each: u32,
    given: HashMap<String, u32>,
}

impl Begun {
    pub fn new(each: u32) -> Self {
        Begun {
            each,
            given: HashMap::new(),
        }
    }

    /// Pairs each of a tenant's picks, in order, with whether it is begun,
    /// counting those of the claim's earlier rounds.
    pub fn mark<T>(&mut self, tenant: &str, picks: Vec<T>) -> Vec<(T, bool)> {
        if self.each == 0 || self.each == u32::MAX {
            let all = self.each == u32::MAX;
            return picks.into_iter().map(|p| (p, all)).collect();
        }
        let given = self.given.entry(tenant.to_owned()).or_default();
        picks
            .into_iter()
            .map(|p| {
                let begun = *given < self.each;
                *given += u32::from(begun);
                (p, begun)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_of_each_tenant_are_begun_across_rounds() {
        let mut b = Begun::new(2);
        assert_eq!(
            b.mark("a", vec![1, 2, 3]),
            [(1, true), (2, true), (3, false)]
        );
        assert_eq!(b.mark("b", vec![4]), [(4, true)]);
        assert_eq!(b.mark("b", vec![5, 6]), [(5, true), (6, false)]);
        assert_eq!(Begun::new(0).mark("a", vec![1]), [(1, false)]);
        assert_eq!(
            Begun::new(u32::MAX).mark("a", vec![1, 2]),
            [(1, true), (2, true)]
        );
    }
}
