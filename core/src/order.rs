//! One sort for every list the bar orders. Each `sort_by_key` on another
//! element type or key is another copy of the standard library's sort in
//! `turnstile.wasm` (about 5 KB each after `wasm-opt`); so is each
//! `collect` into a `BTreeSet` or `BTreeMap` of another type, and each
//! `BTreeMap::from` an array (they sort first). Here every list is ordered
//! through one sort of (rank, position) pairs, only the small reordering is
//! generic, and sets and maps are built by insertion.

/// Orders `items` by `rank`, ties kept in their order (a stable sort).
pub fn sort_by_rank<T>(items: &mut Vec<T>, rank: impl Fn(&T) -> u128) {
    let mut order: Vec<(u128, usize)> = items.iter().enumerate().map(|(i, t)| (rank(t), i)).collect();
    sort_pairs(&mut order);
    let mut slots: Vec<Option<T>> = items.drain(..).map(Some).collect();
    items.extend(order.iter().filter_map(|&(_, i)| slots[i].take()));
}

/// A set built by insertion (no sort).
pub fn set_of<T: Ord>(items: impl IntoIterator<Item = T>) -> std::collections::BTreeSet<T> {
    let mut set = std::collections::BTreeSet::new();
    set.extend(items);
    set
}

/// A map built by insertion (no sort), later keys replacing earlier ones.
pub fn map_of<K: Ord, V>(pairs: impl IntoIterator<Item = (K, V)>) -> std::collections::BTreeMap<K, V> {
    let mut map = std::collections::BTreeMap::new();
    map.extend(pairs);
    map
}

/// The one sort (the position breaks ties: unstable is stable here).
#[inline(never)]
fn sort_pairs(pairs: &mut [(u128, usize)]) {
    pairs.sort_unstable();
}

/// A rank of two numbers, the first deciding.
pub fn rank2(first: u64, second: u64) -> u128 {
    (u128::from(first) << 64) | u128::from(second)
}

/// A rank of three numbers, the first deciding, then the second.
pub fn rank3(first: u8, second: u64, third: u32) -> u128 {
    (u128::from(first) << 96) | (u128::from(second) << 32) | u128::from(third)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The same order as the standard library's stable sort.
        #[test]
        fn orders_as_a_stable_sort(items in proptest::collection::vec((0u8..4, 0u16..1000), 0..40)) {
            let mut ours = items.clone();
            sort_by_rank(&mut ours, |(k, _)| u128::from(*k));
            let mut std = items;
            std.sort_by_key(|(k, _)| *k);
            prop_assert_eq!(ours, std);
        }
    }

    #[test]
    fn the_first_number_decides() {
        assert!(rank2(1, 0) > rank2(0, u64::MAX));
        assert!(rank2(1, 2) < rank2(1, 3));
        assert!(rank3(1, 0, 0) > rank3(0, u64::MAX, u32::MAX));
        assert!(rank3(1, 5, 0) > rank3(1, 4, u32::MAX));
    }
}
