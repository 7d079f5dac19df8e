//! Finding the members of a geo set inside a circle or a box, as Redis does: a cell size
//! from the shape's size, the cell of the centre and its eight neighbours (less those the
//! shape cannot reach), one score-range scan per cell, and the exact distance test. Members
//! come out in Redis's order: cell by cell (centre, north, south, east, west, north-east,
//! north-west, south-east, south-west), by score within a cell.

use super::hash::{
    self, Area, Cell, EARTH_RADIUS_M, STORED_LAT, STORED_LON, distance, lat_distance, neighbour,
};
use crate::cmd::zsets::store::{self as zstore, ScoreRange, Zset};
use crate::resp::Reply;
use crate::store::Txn;

/// Web Mercator's half circumference, in metres (Redis's `MERCATOR_MAX`).
const MERCATOR_MAX: f64 = 20_037_726.37;

/// What to search: around `(lon, lat)`, within a radius or a box (metres).
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    /// The centre's longitude.
    pub lon: f64,
    /// The centre's latitude.
    pub lat: f64,
    /// The radius or the box.
    pub kind: Kind,
}

/// A circle or a box, in metres.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// BYRADIUS.
    Radius(f64),
    /// BYBOX: width and height.
    Box(f64, f64),
}

/// A member found: its name, score (geohash) and distance from the centre in metres.
#[derive(Clone, Debug)]
pub struct Found {
    /// The member.
    pub member: Vec<u8>,
    /// Its stored score.
    pub score: u64,
    /// Its distance from the centre, in metres.
    pub dist: f64,
}

/// Bits per coordinate of the cells to scan for a search of `radius` metres at `lat`.
fn steps_for(radius: f64, lat: f64) -> u8 {
    if radius == 0.0 {
        return hash::STEP_MAX;
    }
    let mut r = radius;
    let mut step: i32 = 1;
    while r < MERCATOR_MAX {
        r *= 2.0;
        step += 1;
    }
    step -= 2;
    // Cells narrow towards the poles.
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, i32::from(hash::STEP_MAX)) as u8
}

/// The shape's bounding box: `(min_lon, min_lat, max_lon, max_lat)`.
fn bounding_box(s: &Shape) -> (f64, f64, f64, f64) {
    let (half_w, half_h) = match s.kind {
        Kind::Radius(r) => (r, r),
        Kind::Box(w, h) => (w / 2.0, h / 2.0),
    };
    let lat_delta = hash::deg(half_h / EARTH_RADIUS_M);
    let lon_delta_top = hash::deg(half_w / EARTH_RADIUS_M / hash::radians(s.lat + lat_delta).cos());
    let lon_delta_bottom =
        hash::deg(half_w / EARTH_RADIUS_M / hash::radians(s.lat - lat_delta).cos());
    let lon_delta = if s.lat < 0.0 {
        lon_delta_bottom
    } else {
        lon_delta_top
    };
    (
        s.lon - lon_delta,
        s.lat - lat_delta,
        s.lon + lon_delta,
        s.lat + lat_delta,
    )
}

/// The cells to scan, in Redis's order (`None` for a neighbour the shape cannot reach).
fn cells(s: &Shape) -> [Option<Cell>; 9] {
    let (min_lon, min_lat, max_lon, max_lat) = bounding_box(s);
    let radius = match s.kind {
        Kind::Radius(r) => r,
        Kind::Box(w, h) => ((w / 2.0) * (w / 2.0) + (h / 2.0) * (h / 2.0)).sqrt(),
    };
    let mut step = steps_for(radius, s.lat);
    let around = |step: u8| -> Option<(Cell, Area)> {
        let c = hash::encode(STORED_LON, STORED_LAT, s.lon, s.lat, step)?;
        Some((c, hash::decode(STORED_LON, STORED_LAT, c)))
    };
    let Some((mut centre, mut area)) = around(step) else {
        return [None; 9];
    };
    let dec = |c: Cell| hash::decode(STORED_LON, STORED_LAT, c);
    let too_small = dec(neighbour(centre, 0, 1)).lat.max < max_lat
        || dec(neighbour(centre, 0, -1)).lat.min > min_lat
        || dec(neighbour(centre, 1, 0)).lon.max < max_lon
        || dec(neighbour(centre, -1, 0)).lon.min > min_lon;
    if step > 1 && too_small {
        step -= 1;
        if let Some((c, a)) = around(step) {
            (centre, area) = (c, a);
        }
    }
    // Neighbours as (dlon, dlat), in Redis's order after the centre.
    const AROUND: [(i8, i8); 8] = [
        (0, 1),
        (0, -1),
        (1, 0),
        (-1, 0),
        (1, 1),
        (-1, 1),
        (1, -1),
        (-1, -1),
    ];
    let mut out = [None; 9];
    out[0] = Some(centre);
    for (i, (dlon, dlat)) in AROUND.iter().enumerate() {
        let useless = step >= 2
            && ((*dlat < 0 && area.lat.min < min_lat)
                || (*dlat > 0 && area.lat.max > max_lat)
                || (*dlon < 0 && area.lon.min < min_lon)
                || (*dlon > 0 && area.lon.max > max_lon));
        if !useless {
            out[i + 1] = Some(neighbour(centre, *dlon, *dlat));
        }
    }
    out
}

/// The distance of a stored point from the centre if it lies inside the shape.
fn inside(s: &Shape, lon: f64, lat: f64) -> Option<f64> {
    match s.kind {
        Kind::Radius(r) => {
            let d = distance(s.lon, s.lat, lon, lat);
            (d <= r).then_some(d)
        }
        Kind::Box(w, h) => {
            if lat_distance(lat, s.lat) > h / 2.0 {
                return None;
            }
            if distance(lon, lat, s.lon, lat) > w / 2.0 {
                return None;
            }
            Some(distance(s.lon, s.lat, lon, lat))
        }
    }
}

/// The members of the set inside the shape, in Redis's order; stops at `limit` members
/// (COUNT ... ANY; 0: no limit).
///
/// # Errors
/// Engine errors, a damaged set.
pub fn search(
    txn: &Txn<'_>,
    key: &[u8],
    z: Zset,
    s: &Shape,
    limit: usize,
) -> Result<Vec<Found>, Reply> {
    let mut out: Vec<Found> = Vec::new();
    // The last cell scanned and its place: for huge radii neighbours can repeat the previous
    // neighbour, which is skipped (Redis never compares with the centre).
    let mut last: Option<(usize, Cell)> = None;
    for (i, cell) in cells(s).into_iter().enumerate() {
        let Some(cell) = cell else {
            continue;
        };
        if last.is_some_and(|(li, lc)| li > 0 && lc == cell) {
            continue;
        }
        if limit > 0 && out.len() >= limit {
            break;
        }
        let (min, max) = cell.score_range();
        let range = ScoreRange {
            min: min as f64,
            minex: false,
            max: max as f64,
            maxex: true,
        };
        zstore::for_each_in_score_range(txn, key, z, &range, false, |m, score| {
            let score = score as u64;
            let (lon, lat) = hash::point_of(score);
            if let Some(dist) = inside(s, lon, lat) {
                out.push(Found {
                    member: m.to_vec(),
                    score,
                    dist,
                });
            }
            Ok(limit == 0 || out.len() < limit)
        })?;
        last = Some((i, cell));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_size_follows_the_radius_as_redis_picks_it() {
        assert_eq!(steps_for(0.0, 0.0), 26);
        assert_eq!(steps_for(200_000.0, 38.0), 6);
        assert_eq!(steps_for(200_000.0, 70.0), 5);
        assert_eq!(steps_for(200_000.0, 85.0), 4);
        assert_eq!(steps_for(1.0, 0.0), 24);
        assert_eq!(steps_for(1e9, 0.0), 1);
    }
}
