//! Geohashes as Redis keeps them in a sorted set's scores: 26 bits of latitude and 26 of
//! longitude interleaved into a 52-bit integer (latitude in the even bits), over the
//! latitudes Web Mercator covers; distances on a sphere of Redis's Earth radius.

/// Latitudes Redis accepts (Web Mercator's limits).
pub const LAT_MIN: f64 = -85.051_128_78;
/// See [`LAT_MIN`].
pub const LAT_MAX: f64 = 85.051_128_78;
/// Longitudes Redis accepts.
pub const LON_MIN: f64 = -180.0;
/// See [`LON_MIN`].
pub const LON_MAX: f64 = 180.0;

/// Bits per coordinate in a stored score.
pub const STEP_MAX: u8 = 26;

/// Redis's Earth radius, in metres.
pub const EARTH_RADIUS_M: f64 = 6_372_797.560_856;

/// A geohash: `bits` holds `2 * step` interleaved bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The interleaved bits.
    pub bits: u64,
    /// Bits per coordinate.
    pub step: u8,
}

impl Cell {
    /// The scores of the stored points inside this cell: `min..max` (max excluded).
    pub fn score_range(self) -> (u64, u64) {
        let shift = 52 - u32::from(self.step) * 2;
        (self.bits << shift, (self.bits + 1) << shift)
    }
}

/// A coordinate range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    /// Lowest value.
    pub min: f64,
    /// Highest value.
    pub max: f64,
}

/// The area a cell covers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Area {
    /// Its longitudes.
    pub lon: Range,
    /// Its latitudes.
    pub lat: Range,
}

/// The ranges stored scores encode.
pub const STORED_LON: Range = Range {
    min: LON_MIN,
    max: LON_MAX,
};
/// See [`STORED_LON`].
pub const STORED_LAT: Range = Range {
    min: LAT_MIN,
    max: LAT_MAX,
};

/// Spreads the low 32 bits of `v` to the even bits of a u64.
fn spread(v: u32) -> u64 {
    let mut x = u64::from(v);
    x = (x | (x << 16)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x << 8)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x << 4)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

/// Gathers the even bits of `v` into a u32.
fn gather(v: u64) -> u32 {
    let mut x = v & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0F0F_0F0F_0F0F_0F0F;
    x = (x | (x >> 4)) & 0x00FF_00FF_00FF_00FF;
    x = (x | (x >> 8)) & 0x0000_FFFF_0000_FFFF;
    x = (x | (x >> 16)) & 0x0000_0000_FFFF_FFFF;
    x as u32
}

/// True when Redis accepts the point.
pub fn valid(lon: f64, lat: f64) -> bool {
    (LON_MIN..=LON_MAX).contains(&lon) && (LAT_MIN..=LAT_MAX).contains(&lat)
}

/// The cell of `step` bits per coordinate holding the point, over the given ranges; `None`
/// outside what Redis accepts.
pub fn encode(lon_range: Range, lat_range: Range, lon: f64, lat: f64, step: u8) -> Option<Cell> {
    if !valid(lon, lat)
        || lat < lat_range.min
        || lat > lat_range.max
        || lon < lon_range.min
        || lon > lon_range.max
    {
        return None;
    }
    let scale = (1u64 << step) as f64;
    let lat_off = (lat - lat_range.min) / (lat_range.max - lat_range.min) * scale;
    let lon_off = (lon - lon_range.min) / (lon_range.max - lon_range.min) * scale;
    // C's double-to-uint32 conversion truncates, as `as` does.
    Some(Cell {
        bits: spread(lat_off as u32) | (spread(lon_off as u32) << 1),
        step,
    })
}

/// The stored score of a point (`None`: outside the accepted range).
pub fn score_of(lon: f64, lat: f64) -> Option<u64> {
    encode(STORED_LON, STORED_LAT, lon, lat, STEP_MAX).map(|c| c.bits)
}

/// The area `cell` covers over the given ranges.
pub fn decode(lon_range: Range, lat_range: Range, cell: Cell) -> Area {
    let scale = (1u64 << cell.step) as f64;
    let ilat = f64::from(gather(cell.bits));
    let ilon = f64::from(gather(cell.bits >> 1));
    let lat_scale = lat_range.max - lat_range.min;
    let lon_scale = lon_range.max - lon_range.min;
    Area {
        lat: Range {
            min: lat_range.min + (ilat / scale) * lat_scale,
            max: lat_range.min + ((ilat + 1.0) / scale) * lat_scale,
        },
        lon: Range {
            min: lon_range.min + (ilon / scale) * lon_scale,
            max: lon_range.min + ((ilon + 1.0) / scale) * lon_scale,
        },
    }
}

/// The point a stored score stands for: its cell's centre, `(lon, lat)`.
pub fn point_of(score: u64) -> (f64, f64) {
    let a = decode(
        STORED_LON,
        STORED_LAT,
        Cell {
            bits: score,
            step: STEP_MAX,
        },
    );
    let lon = ((a.lon.min + a.lon.max) / 2.0).clamp(LON_MIN, LON_MAX);
    let lat = ((a.lat.min + a.lat.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    (lon, lat)
}

/// Moves a cell by `d` columns (longitude: the odd bits).
fn move_lon(c: &mut Cell, d: i8) {
    if d == 0 {
        return;
    }
    let lon = c.bits & 0xaaaa_aaaa_aaaa_aaaa;
    let lat = c.bits & 0x5555_5555_5555_5555;
    let zz = 0x5555_5555_5555_5555u64 >> (64 - u32::from(c.step) * 2);
    let lon = if d > 0 {
        lon.wrapping_add(zz + 1)
    } else {
        (lon | zz).wrapping_sub(zz + 1)
    };
    c.bits = (lon & (0xaaaa_aaaa_aaaa_aaaau64 >> (64 - u32::from(c.step) * 2))) | lat;
}

/// Moves a cell by `d` rows (latitude: the even bits).
fn move_lat(c: &mut Cell, d: i8) {
    if d == 0 {
        return;
    }
    let lon = c.bits & 0xaaaa_aaaa_aaaa_aaaa;
    let lat = c.bits & 0x5555_5555_5555_5555;
    let zz = 0xaaaa_aaaa_aaaa_aaaau64 >> (64 - u32::from(c.step) * 2);
    let lat = if d > 0 {
        lat.wrapping_add(zz + 1)
    } else {
        (lat | zz).wrapping_sub(zz + 1)
    };
    c.bits = lon | (lat & (0x5555_5555_5555_5555u64 >> (64 - u32::from(c.step) * 2)));
}

/// A cell moved by `dlon` columns and `dlat` rows (wrapping around, as Redis's do).
pub fn neighbour(c: Cell, dlon: i8, dlat: i8) -> Cell {
    let mut n = c;
    move_lon(&mut n, dlon);
    move_lat(&mut n, dlat);
    n
}

fn rad(deg: f64) -> f64 {
    deg * (std::f64::consts::PI / 180.0)
}

/// Degrees of `r` radians.
pub fn deg(r: f64) -> f64 {
    r / (std::f64::consts::PI / 180.0)
}

/// Radians of `d` degrees.
pub fn radians(d: f64) -> f64 {
    rad(d)
}

/// Metres between two latitudes on one meridian.
pub fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS_M * (rad(lat2) - rad(lat1)).abs()
}

/// Metres between two points (haversine), as Redis computes them.
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let v = ((rad(lon2) - rad(lon1)) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let (lat1r, lat2r) = (rad(lat1), rad(lat2));
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_M * a.sqrt().asin()
}

const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";

/// The standard 11-character geohash of a stored score (re-encoded over latitudes -90..90,
/// as GEOHASH answers).
pub fn geohash_string(score: u64) -> String {
    let (lon, lat) = point_of(score);
    let std_lat = Range {
        min: -90.0,
        max: 90.0,
    };
    let bits = encode(STORED_LON, std_lat, lon, lat, STEP_MAX).map_or(0, |c| c.bits);
    (0..11)
        .map(|i| {
            let idx = if i == 10 {
                0
            } else {
                (bits >> (52 - (i + 1) * 5)) & 0x1f
            };
            ALPHABET[idx as usize] as char
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaving_round_trips() {
        for v in [0u32, 1, 0x3ff_ffff, 0x155_5555, 12345] {
            assert_eq!(gather(spread(v)), v);
            assert_eq!(gather(spread(v) << 1 >> 1), v);
        }
    }

    #[test]
    fn scores_and_hashes_match_redis() {
        // GEOADD Sicily 13.361389 38.115556 Palermo 15.087269 37.502669 Catania, as
        // redis-server 7.0.15 stores and prints them.
        let palermo = score_of(13.361_389, 38.115_556).unwrap();
        let catania = score_of(15.087_269, 37.502_669).unwrap();
        assert_eq!(palermo, 3_479_099_956_230_698);
        assert_eq!(catania, 3_479_447_370_796_909);
        assert_eq!(geohash_string(palermo), "sqc8b49rny0");
        assert_eq!(geohash_string(catania), "sqdtr74hyu0");
        let (lon, lat) = point_of(palermo);
        assert_eq!(format!("{lon:.17}"), "13.36138933897018433");
        assert_eq!(format!("{lat:.17}"), "38.11555639549629859");
        let (lon2, lat2) = point_of(catania);
        let d = distance(lon, lat, lon2, lat2);
        assert_eq!(format!("{d:.4}"), "166274.1516");
        assert!(score_of(181.0, 0.0).is_none());
        assert!(score_of(0.0, 85.06).is_none());
    }

    #[test]
    fn neighbours_move_one_cell() {
        let c = encode(STORED_LON, STORED_LAT, 13.36, 38.11, 10).unwrap();
        let a = decode(STORED_LON, STORED_LAT, c);
        let e = decode(STORED_LON, STORED_LAT, neighbour(c, 1, 0));
        let n = decode(STORED_LON, STORED_LAT, neighbour(c, 0, 1));
        let sw = decode(STORED_LON, STORED_LAT, neighbour(c, -1, -1));
        assert!((e.lon.min - a.lon.max).abs() < 1e-9 && e.lat == a.lat);
        assert!((n.lat.min - a.lat.max).abs() < 1e-9 && n.lon == a.lon);
        assert!((sw.lon.max - a.lon.min).abs() < 1e-9 && (sw.lat.max - a.lat.min).abs() < 1e-9);
    }
}
