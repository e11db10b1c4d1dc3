//! Redis 7.0.15's geohash (`src/geohash.c`, `src/geohash_helper.c`): 52-bit interleaved scores
//! (26 bits of latitude on the even positions, 26 of longitude on the odd ones, latitude limited
//! to ±85.05112878 as in Web Mercator), the 9 boxes a radius or box search reads, and the
//! Haversine distance with Redis's earth radius. Every operation is in the same order as in C so
//! that the doubles, and so the replies, are bit-identical.

pub const STEP_MAX: u8 = 26;
pub const LAT_MIN: f64 = -85.05112878;
pub const LAT_MAX: f64 = 85.05112878;
pub const LONG_MIN: f64 = -180.0;
pub const LONG_MAX: f64 = 180.0;

const D_R: f64 = std::f64::consts::PI / 180.0;
/// Redis's `EARTH_RADIUS_IN_METERS` (the quadratic mean radius of WGS-84).
const EARTH_RADIUS_IN_METERS: f64 = 6372797.560856;
const MERCATOR_MAX: f64 = 20037726.37;

/// A geohash of `step` bits per coordinate (`GeoHashBits`); all zero is "no box".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HashBits {
    pub bits: u64,
    pub step: u8,
}

impl HashBits {
    fn is_zero(&self) -> bool {
        self.bits == 0 && self.step == 0
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Range {
    pub min: f64,
    pub max: f64,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Area {
    pub longitude: Range,
    pub latitude: Range,
}

const WGS84_LONG: Range = Range {
    min: LONG_MIN,
    max: LONG_MAX,
};
const WGS84_LAT: Range = Range {
    min: LAT_MIN,
    max: LAT_MAX,
};

/// Bits of `x` on the even positions, bits of `y` on the odd ones.
fn interleave64(x: u32, y: u32) -> u64 {
    let spread = |v: u32| {
        let mut v = v as u64;
        v = (v | (v << 16)) & 0x0000_FFFF_0000_FFFF;
        v = (v | (v << 8)) & 0x00FF_00FF_00FF_00FF;
        v = (v | (v << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
        v = (v | (v << 2)) & 0x3333_3333_3333_3333;
        (v | (v << 1)) & 0x5555_5555_5555_5555
    };
    spread(x) | (spread(y) << 1)
}

/// The inverse: even bits in the low 32 bits, odd bits in the high 32.
fn deinterleave64(v: u64) -> u64 {
    let squash = |mut x: u64| {
        x &= 0x5555_5555_5555_5555;
        x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
        x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
        x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
        x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
        (x | (x >> 16)) & 0x0000_0000_FFFF_FFFF
    };
    squash(v) | (squash(v >> 1) << 32)
}

/// `geohashEncode` over the given ranges; `None` where Redis returns 0.
pub fn encode(
    long_range: Range,
    lat_range: Range,
    longitude: f64,
    latitude: f64,
    step: u8,
) -> Option<HashBits> {
    if step > 32 || step == 0 {
        return None;
    }
    if !(LONG_MIN..=LONG_MAX).contains(&longitude) || !(LAT_MIN..=LAT_MAX).contains(&latitude) {
        return None;
    }
    if latitude < lat_range.min
        || latitude > lat_range.max
        || longitude < long_range.min
        || longitude > long_range.max
    {
        return None;
    }
    let mut lat_offset = (latitude - lat_range.min) / (lat_range.max - lat_range.min);
    let mut long_offset = (longitude - long_range.min) / (long_range.max - long_range.min);
    lat_offset *= (1u64 << step) as f64;
    long_offset *= (1u64 << step) as f64;
    Some(HashBits {
        bits: interleave64(lat_offset as u32, long_offset as u32),
        step,
    })
}

/// `geohashEncodeWGS84`.
pub fn encode_wgs84(longitude: f64, latitude: f64, step: u8) -> Option<HashBits> {
    encode(WGS84_LONG, WGS84_LAT, longitude, latitude, step)
}

/// `geohashDecode`: the box a hash stands for.
pub fn decode(long_range: Range, lat_range: Range, hash: HashBits) -> Option<Area> {
    if hash.is_zero() {
        return None;
    }
    let separated = deinterleave64(hash.bits);
    let lat_scale = lat_range.max - lat_range.min;
    let long_scale = long_range.max - long_range.min;
    let ilato = separated as u32;
    let ilono = (separated >> 32) as u32;
    let cells = (1u64 << hash.step) as f64;
    // `ilato + 1` is 32-bit arithmetic in C: it wraps.
    Some(Area {
        latitude: Range {
            min: lat_range.min + (ilato as f64 / cells) * lat_scale,
            max: lat_range.min + (ilato.wrapping_add(1) as f64 / cells) * lat_scale,
        },
        longitude: Range {
            min: long_range.min + (ilono as f64 / cells) * long_scale,
            max: long_range.min + (ilono.wrapping_add(1) as f64 / cells) * long_scale,
        },
    })
}

/// `decodeGeohash`: the longitude and latitude a sorted-set score stands for (the centre of its
/// 52-bit box, clamped to the valid range). Any score decodes, as in Redis.
pub fn decode_score(score: f64) -> [f64; 2] {
    let hash = HashBits {
        bits: c_double_to_u64(score),
        step: STEP_MAX,
    };
    let area = decode(WGS84_LONG, WGS84_LAT, hash).unwrap_or_default();
    let lon = ((area.longitude.min + area.longitude.max) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let lat = ((area.latitude.min + area.latitude.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    [lon, lat]
}

/// C's `(uint64_t)double` as x86-64 compilers emit it (out-of-range values do not saturate).
fn c_double_to_u64(v: f64) -> u64 {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    let signed = |x: f64| -> u64 {
        if !(-TWO_63..TWO_63).contains(&x) {
            i64::MIN as u64
        } else {
            x as i64 as u64
        }
    };
    if v >= TWO_63 {
        signed(v - TWO_63) ^ (1u64 << 63)
    } else {
        signed(v)
    }
}

/// `geohashAlign52Bits`: the hash as a 52-bit sorted-set score.
pub fn align52(hash: HashBits) -> u64 {
    hash.bits << (52 - hash.step as u32 * 2)
}

/// The standard geohash text (latitude over ±90), 11 characters, as GEOHASH prints it.
pub fn standard_text(xy: [f64; 2]) -> Option<String> {
    const ALPHABET: &[u8] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let long = Range {
        min: -180.0,
        max: 180.0,
    };
    let lat = Range {
        min: -90.0,
        max: 90.0,
    };
    let hash = encode(long, lat, xy[0], xy[1], STEP_MAX)?;
    Some(
        (0..11)
            .map(|i| {
                // 52 bits give 10 characters; the 11th is 0, as in Redis.
                let idx = if i == 10 {
                    0
                } else {
                    (hash.bits >> (52 - (i + 1) * 5)) & 0x1f
                };
                ALPHABET[idx as usize] as char
            })
            .collect(),
    )
}

fn move_x(hash: &mut HashBits, d: i8) {
    if d == 0 {
        return;
    }
    let mut x = hash.bits & 0xaaaa_aaaa_aaaa_aaaa;
    let y = hash.bits & 0x5555_5555_5555_5555;
    let zz = 0x5555_5555_5555_5555u64 >> (64 - hash.step as u32 * 2);
    if d > 0 {
        x = x.wrapping_add(zz + 1);
    } else {
        x |= zz;
        x = x.wrapping_sub(zz + 1);
    }
    x &= 0xaaaa_aaaa_aaaa_aaaau64 >> (64 - hash.step as u32 * 2);
    hash.bits = x | y;
}

fn move_y(hash: &mut HashBits, d: i8) {
    if d == 0 {
        return;
    }
    let x = hash.bits & 0xaaaa_aaaa_aaaa_aaaa;
    let mut y = hash.bits & 0x5555_5555_5555_5555;
    let zz = 0xaaaa_aaaa_aaaa_aaaau64 >> (64 - hash.step as u32 * 2);
    if d > 0 {
        y = y.wrapping_add(zz + 1);
    } else {
        y |= zz;
        y = y.wrapping_sub(zz + 1);
    }
    y &= 0x5555_5555_5555_5555u64 >> (64 - hash.step as u32 * 2);
    hash.bits = x | y;
}

fn moved(hash: HashBits, dx: i8, dy: i8) -> HashBits {
    let mut h = hash;
    move_x(&mut h, dx);
    move_y(&mut h, dy);
    h
}

/// `geohashEstimateStepsByRadius`.
fn estimate_steps_by_radius(mut range_meters: f64, lat: f64) -> u8 {
    if range_meters == 0.0 {
        return 26;
    }
    let mut step: i32 = 1;
    while range_meters < MERCATOR_MAX {
        range_meters *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

/// What a search covers (`GeoShape`): a circle or an axis-aligned box around `xy`, in the
/// request's unit (`conversion` metres per unit).
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub xy: [f64; 2],
    pub conversion: f64,
    pub kind: ShapeKind,
}

#[derive(Debug, Clone, Copy)]
pub enum ShapeKind {
    Radius(f64),
    Box { width: f64, height: f64 },
}

impl Shape {
    /// `geohashBoundingBox`: min lon, min lat, max lon, max lat.
    fn bounding_box(&self) -> [f64; 4] {
        let [longitude, latitude] = self.xy;
        let (height, width) = match self.kind {
            ShapeKind::Radius(r) => (self.conversion * r, self.conversion * r),
            ShapeKind::Box { width, height } => (
                self.conversion * (height / 2.0),
                self.conversion * (width / 2.0),
            ),
        };
        let lat_delta = rad_deg(height / EARTH_RADIUS_IN_METERS);
        let long_delta_top =
            rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude + lat_delta).cos());
        let long_delta_bottom =
            rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude - lat_delta).cos());
        let southern = latitude < 0.0;
        [
            if southern {
                longitude - long_delta_bottom
            } else {
                longitude - long_delta_top
            },
            latitude - lat_delta,
            if southern {
                longitude + long_delta_bottom
            } else {
                longitude + long_delta_top
            },
            latitude + lat_delta,
        ]
    }

    /// `geoWithinShape` after decoding: the distance from the centre when the point is inside.
    pub fn distance_if_within(&self, xy: [f64; 2]) -> Option<f64> {
        let [x1, y1] = self.xy;
        let [x2, y2] = xy;
        match self.kind {
            ShapeKind::Radius(r) => {
                let d = distance(x1, y1, x2, y2);
                // `d > radius` rejects; a NaN distance is kept, as in C.
                (d.partial_cmp(&(r * self.conversion)) != Some(std::cmp::Ordering::Greater))
                    .then_some(d)
            }
            ShapeKind::Box { width, height } => {
                let (width_m, height_m) = (width * self.conversion, height * self.conversion);
                if lat_distance(y2, y1) > height_m / 2.0 {
                    return None;
                }
                if distance(x2, y2, x1, y2) > width_m / 2.0 {
                    return None;
                }
                Some(distance(x1, y1, x2, y2))
            }
        }
    }

    /// `geohashCalculateAreasByShapeWGS84`: the centre box and its 8 neighbours (zero where
    /// useless), in the order Redis reads them: self, N, S, E, W, NE, NW, SE, SW.
    pub fn search_boxes(&self) -> [HashBits; 9] {
        let [min_lon, min_lat, max_lon, max_lat] = self.bounding_box();
        let [longitude, latitude] = self.xy;
        let radius_meters = match self.kind {
            ShapeKind::Radius(r) => r,
            ShapeKind::Box { width, height } => {
                ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt()
            }
        } * self.conversion;
        let mut steps = estimate_steps_by_radius(radius_meters, latitude);
        let at = |steps: u8| {
            let hash =
                encode(WGS84_LONG, WGS84_LAT, longitude, latitude, steps).unwrap_or(HashBits {
                    bits: 0,
                    step: steps,
                });
            let area = decode(WGS84_LONG, WGS84_LAT, hash).unwrap_or_default();
            (hash, area)
        };
        let (mut hash, mut area) = at(steps);
        let box_of = |h: HashBits| decode(WGS84_LONG, WGS84_LAT, h).unwrap_or_default();
        let decrease_step = box_of(moved(hash, 0, 1)).latitude.max < max_lat
            || box_of(moved(hash, 0, -1)).latitude.min > min_lat
            || box_of(moved(hash, 1, 0)).longitude.max < max_lon
            || box_of(moved(hash, -1, 0)).longitude.min > min_lon;
        if steps > 1 && decrease_step {
            steps -= 1;
            (hash, area) = at(steps);
        }
        let mut n = [
            hash,
            moved(hash, 0, 1),   // north
            moved(hash, 0, -1),  // south
            moved(hash, 1, 0),   // east
            moved(hash, -1, 0),  // west
            moved(hash, 1, 1),   // north east
            moved(hash, -1, 1),  // north west
            moved(hash, 1, -1),  // south east
            moved(hash, -1, -1), // south west
        ];
        if steps >= 2 {
            let zero = HashBits::default();
            if area.latitude.min < min_lat {
                for i in [2, 8, 7] {
                    n[i] = zero;
                }
            }
            if area.latitude.max > max_lat {
                for i in [1, 5, 6] {
                    n[i] = zero;
                }
            }
            if area.longitude.min < min_lon {
                for i in [4, 8, 6] {
                    n[i] = zero;
                }
            }
            if area.longitude.max > max_lon {
                for i in [3, 7, 5] {
                    n[i] = zero;
                }
            }
        }
        n
    }
}

/// The scores `[min, max)` of the points inside a box (`scoresOfGeoHashBox`).
pub fn box_scores(hash: HashBits) -> (f64, f64) {
    let min = align52(hash);
    let max = align52(HashBits {
        bits: hash.bits.wrapping_add(1),
        step: hash.step,
    });
    (min as f64, max as f64)
}

/// Whether a box is zero ("skip it").
pub fn is_zero(hash: HashBits) -> bool {
    hash.is_zero()
}

fn deg_rad(ang: f64) -> f64 {
    ang * D_R
}

fn rad_deg(ang: f64) -> f64 {
    ang / D_R
}

/// `geohashGetLatDistance`.
fn lat_distance(lat1d: f64, lat2d: f64) -> f64 {
    EARTH_RADIUS_IN_METERS * (deg_rad(lat2d) - deg_rad(lat1d)).abs()
}

/// `geohashGetDistance`: Haversine, in metres.
pub fn distance(lon1d: f64, lat1d: f64, lon2d: f64, lat2d: f64) -> f64 {
    let lon1r = deg_rad(lon1d);
    let lon2r = deg_rad(lon2d);
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1d, lat2d);
    }
    let lat1r = deg_rad(lat1d);
    let lat2r = deg_rad(lat2d);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_IN_METERS * a.sqrt().asin()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleave_round_trips() {
        for (x, y) in [
            (0u32, 0u32),
            (1, 0),
            (0, 1),
            (0x3ff_ffff, 0x155_5555),
            (u32::MAX, 7),
        ] {
            let v = deinterleave64(interleave64(x, y));
            assert_eq!((v as u32, (v >> 32) as u32), (x, y));
        }
    }

    #[test]
    fn palermo_score_and_hash() {
        // GEOADD Sicily 13.361389 38.115556 "Palermo" stores 3479099956230698 (Redis docs).
        let h = encode_wgs84(13.361389, 38.115556, STEP_MAX).unwrap();
        assert_eq!(align52(h), 3479099956230698);
        let xy = decode_score(3479099956230698.0);
        assert_eq!(standard_text(xy).unwrap(), "sqc8b49rny0");
    }

    #[test]
    fn c_casts() {
        assert_eq!(c_double_to_u64(-1.0), u64::MAX);
        assert_eq!(c_double_to_u64(f64::INFINITY), 0);
        assert_eq!(c_double_to_u64(1e19), 10_000_000_000_000_000_000);
    }
}
