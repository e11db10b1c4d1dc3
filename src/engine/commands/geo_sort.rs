//! The two sorts a geo search result goes through in Redis 7.0.15, ported so that points at
//! equal distances come out in the same order: glibc 2.36's `qsort` (a top-down merge sort,
//! stable) when every result is returned, and Redis's `pqsort` (a BSD quicksort that only
//! sorts the part holding ranks `lrange..=rrange`, not stable) when COUNT cuts the result.
//! Comparators return C's -1/0/1 and need not be a total order (NaN distances).

/// glibc `msort_with_tmp`: split at `n / 2`, sort both halves, merge taking the left element
/// while `cmp(left, right) <= 0`.
pub fn merge_sort<T: Clone>(v: &mut [T], cmp: &impl Fn(&T, &T) -> i32) {
    let n = v.len();
    if n <= 1 {
        return;
    }
    let n1 = n / 2;
    merge_sort(&mut v[..n1], cmp);
    merge_sort(&mut v[n1..], cmp);
    let mut merged = Vec::with_capacity(n);
    let (mut i, mut j) = (0, n1);
    while i < n1 && j < n {
        if cmp(&v[i], &v[j]) <= 0 {
            merged.push(v[i].clone());
            i += 1;
        } else {
            merged.push(v[j].clone());
            j += 1;
        }
    }
    merged.extend_from_slice(&v[i..n1]);
    merged.extend_from_slice(&v[j..n]);
    v.clone_from_slice(&merged);
}

/// Redis `pqsort(a, n, es, cmp, lrange, rrange)` on element indices.
pub fn partial_quick_sort<T>(
    v: &mut [T],
    cmp: &impl Fn(&T, &T) -> i32,
    lrange: usize,
    rrange: usize,
) {
    pqsort(v, 0, v.len(), cmp, lrange, rrange);
}

/// `med3`: the index of the median of three.
fn med3<T>(v: &[T], a: usize, b: usize, c: usize, cmp: &impl Fn(&T, &T) -> i32) -> usize {
    if cmp(&v[a], &v[b]) < 0 {
        if cmp(&v[b], &v[c]) < 0 {
            b
        } else if cmp(&v[a], &v[c]) < 0 {
            c
        } else {
            a
        }
    } else if cmp(&v[b], &v[c]) > 0 {
        b
    } else if cmp(&v[a], &v[c]) < 0 {
        a
    } else {
        c
    }
}

/// Swap `n` elements starting at `a` with those starting at `b` (`vecswap`).
fn vecswap<T>(v: &mut [T], a: usize, b: usize, n: usize) {
    for k in 0..n {
        v.swap(a + k, b + k);
    }
}

/// `_pqsort` over `v[base..base + n]`; `lrange`/`rrange` are absolute element indices.
fn pqsort<T>(
    v: &mut [T],
    mut base: usize,
    mut n: usize,
    cmp: &impl Fn(&T, &T) -> i32,
    lrange: usize,
    rrange: usize,
) {
    // A sub-array is sorted only when it overlaps the wanted ranks.
    let overlaps = |start: usize, count: usize| !(rrange < start || lrange >= start + count);
    loop {
        let a = base;
        if n < 7 {
            for pm in a + 1..a + n {
                let mut pl = pm;
                while pl > a && cmp(&v[pl - 1], &v[pl]) > 0 {
                    v.swap(pl, pl - 1);
                    pl -= 1;
                }
            }
            return;
        }
        let mut pm = a + n / 2;
        if n > 7 {
            let mut pl = a;
            let mut pn = a + n - 1;
            if n > 40 {
                let d = n / 8;
                pl = med3(v, pl, pl + d, pl + 2 * d, cmp);
                pm = med3(v, pm - d, pm, pm + d, cmp);
                pn = med3(v, pn - 2 * d, pn - d, pn, cmp);
            }
            pm = med3(v, pl, pm, pn, cmp);
        }
        v.swap(a, pm);
        let (mut pa, mut pb) = (a + 1, a + 1);
        // `pc`/`pd` may step below `a` by one in C (pointer one before); keep them as i64.
        let (mut pc, mut pd) = ((a + n - 1) as i64, (a + n - 1) as i64);
        loop {
            while pb as i64 <= pc {
                let r = cmp(&v[pb], &v[a]);
                if r > 0 {
                    break;
                }
                if r == 0 {
                    v.swap(pa, pb);
                    pa += 1;
                }
                pb += 1;
            }
            while pb as i64 <= pc {
                let r = cmp(&v[pc as usize], &v[a]);
                if r < 0 {
                    break;
                }
                if r == 0 {
                    v.swap(pc as usize, pd as usize);
                    pd -= 1;
                }
                pc -= 1;
            }
            if pb as i64 > pc {
                break;
            }
            v.swap(pb, pc as usize);
            pb += 1;
            pc -= 1;
        }
        let pn = a + n;
        let r = (pa - a).min(pb - pa);
        vecswap(v, a, pb - r, r);
        let r = ((pd - pc) as usize).min(pn - pd as usize - 1);
        vecswap(v, pb, pn - r, r);
        let left = pb - pa;
        if left > 1 && overlaps(a, left) {
            pqsort(v, a, left, cmp, lrange, rrange);
        }
        let right = (pd - pc) as usize;
        if right > 1 {
            base = pn - right;
            n = right;
            if overlaps(base, n) {
                continue;
            }
        }
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn by_first(a: &(i32, i32), b: &(i32, i32)) -> i32 {
        a.0.cmp(&b.0) as i32
    }

    #[test]
    fn merge_sort_is_stable() {
        let mut v = vec![(2, 0), (1, 1), (2, 2), (1, 3), (0, 4)];
        merge_sort(&mut v, &by_first);
        assert_eq!(v, vec![(0, 4), (1, 1), (1, 3), (2, 0), (2, 2)]);
    }

    #[test]
    fn partial_sort_orders_the_wanted_ranks() {
        let mut v: Vec<(i32, i32)> = (0..100).map(|i| ((i * 37) % 101, i)).collect();
        let mut all = v.clone();
        all.sort();
        partial_quick_sort(&mut v, &by_first, 0, 9);
        assert_eq!(&v[..10], &all[..10]);
    }
}
