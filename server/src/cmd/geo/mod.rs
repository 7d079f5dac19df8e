//! The geo commands, on sorted sets whose scores are 52-bit geohashes ([`hash`]), as Redis
//! 7.0 keeps them: GEOADD, GEOPOS, GEODIST, GEOHASH, GEOSEARCH, GEOSEARCHSTORE, GEORADIUS,
//! GEORADIUSBYMEMBER and their `_RO` forms. A geo set is a sorted set: ZRANGE, ZREM and the
//! rest work on it.

pub mod hash;
pub mod search;

use bytes::Bytes;

use super::zsets::store::{self as zstore, get_zset};
use super::{NOT_INT, parse_f64, parse_i64};
use crate::resp::Reply;
use crate::store::{R, Txn};
use search::{Found, Kind, Shape};

fn syntax() -> Reply {
    Reply::err("syntax error")
}

fn not_float() -> Reply {
    Reply::err("value is not a valid float")
}

/// Metres per unit.
fn unit(b: &[u8]) -> Result<f64, Reply> {
    match b.to_ascii_lowercase().as_slice() {
        b"m" => Ok(1.0),
        b"km" => Ok(1000.0),
        b"ft" => Ok(0.3048),
        b"mi" => Ok(1609.34),
        _ => Err(Reply::err(
            "unsupported unit provided. please use M, KM, FT, MI",
        )),
    }
}

/// A longitude, latitude pair, checked against what Redis stores.
fn lon_lat(lon: &[u8], lat: &[u8]) -> Result<(f64, f64), Reply> {
    let lon = parse_f64(lon).ok_or_else(not_float)?;
    let lat = parse_f64(lat).ok_or_else(not_float)?;
    if !hash::valid(lon, lat) {
        return Err(Reply::err(format!(
            "invalid longitude,latitude pair {lon:.6},{lat:.6}"
        )));
    }
    Ok((lon, lat))
}

/// A coordinate as Redis prints it: the double's exact decimal value to 17 places, trailing
/// zeros dropped (`%.17Lf` of the double, then trimmed).
fn coord(v: f64) -> Reply {
    let mut s = format!("{v:.17}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".into();
    }
    // RESP3: a double of the same value (Redis sends this text after the `,`).
    Reply::ByProto {
        resp2: Box::new(Reply::bulk(s)),
        resp3: Box::new(Reply::Double(v)),
    }
}

/// A distance as Redis prints it: four decimals, a bulk string in both protocols.
fn dist_reply(metres: f64, per_unit: f64) -> Reply {
    Reply::bulk(format!("{:.4}", metres / per_unit))
}

fn coords_reply(score: u64) -> Reply {
    let (lon, lat) = hash::point_of(score);
    Reply::Array(vec![coord(lon), coord(lat)])
}

/// `GEOADD key [NX|XX] [CH] longitude latitude member ...`: a ZADD of the members' geohashes.
pub fn geoadd(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let mut i = 2;
    let (mut nx, mut xx) = (false, false);
    let mut flags = Vec::new();
    while i < a.len() {
        let o = a[i].to_ascii_uppercase();
        match o.as_slice() {
            b"NX" => nx = true,
            b"XX" => xx = true,
            b"CH" => {}
            _ => break,
        }
        flags.push(a[i].clone());
        i += 1;
    }
    let rest = &a[i..];
    if rest.is_empty() || !rest.len().is_multiple_of(3) || (nx && xx) {
        return Err(syntax());
    }
    let mut zadd = Vec::with_capacity(2 + flags.len() + rest.len() / 3 * 2);
    zadd.push(Bytes::from_static(b"ZADD"));
    zadd.push(a[1].clone());
    zadd.extend(flags);
    for t in rest.chunks(3) {
        let (lon, lat) = lon_lat(&t[0], &t[1])?;
        let score = hash::score_of(lon, lat).ok_or_else(syntax)?;
        zadd.push(Bytes::from(score.to_string()));
        zadd.push(t[2].clone());
    }
    super::zsets::zadd(txn, &zadd)
}

/// The stored score of `member`, if the key and member exist.
fn member_score(txn: &Txn<'_>, key: &[u8], member: &[u8]) -> Result<Option<u64>, Reply> {
    let Some(z) = get_zset(txn, key)? else {
        return Ok(None);
    };
    Ok(zstore::score_of(txn, key, z, member)?.map(|s| s as u64))
}

/// `GEOPOS key member ...`
pub fn geopos(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let z = get_zset(txn, &a[1])?;
    let mut out = Vec::with_capacity(a.len() - 2);
    for m in &a[2..] {
        let score = match z {
            Some(z) => zstore::score_of(txn, &a[1], z, m)?,
            None => None,
        };
        out.push(score.map_or(Reply::NilArray, |s| coords_reply(s as u64)));
    }
    Ok(Reply::Array(out))
}

/// `GEODIST key member1 member2 [M|KM|FT|MI]`
pub fn geodist(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let per_unit = match a.len() {
        4 => 1.0,
        5 => unit(&a[4])?,
        _ => return Err(syntax()),
    };
    let (Some(s1), Some(s2)) = (
        member_score(txn, &a[1], &a[2])?,
        member_score(txn, &a[1], &a[3])?,
    ) else {
        return Ok(Reply::Nil);
    };
    let (lon1, lat1) = hash::point_of(s1);
    let (lon2, lat2) = hash::point_of(s2);
    Ok(dist_reply(hash::distance(lon1, lat1, lon2, lat2), per_unit))
}

/// `GEOHASH key member ...`
pub fn geohash(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let z = get_zset(txn, &a[1])?;
    let mut out = Vec::with_capacity(a.len() - 2);
    for m in &a[2..] {
        let score = match z {
            Some(z) => zstore::score_of(txn, &a[1], z, m)?,
            None => None,
        };
        out.push(score.map_or(Reply::Nil, |s| Reply::bulk(hash::geohash_string(s as u64))));
    }
    Ok(Reply::Array(out))
}

/// Which command's grammar a search parses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    /// GEORADIUS[_RO] key lon lat radius unit ...
    Radius,
    /// GEORADIUSBYMEMBER[_RO] key member radius unit ...
    ByMember,
    /// GEOSEARCH key FROMMEMBER|FROMLONLAT ... BYRADIUS|BYBOX ...
    Search,
    /// GEOSEARCHSTORE dst src ...
    SearchStore,
}

impl Form {
    fn searching(self) -> bool {
        matches!(self, Form::Search | Form::SearchStore)
    }
}

/// A parsed search.
struct Query {
    /// The centre (`None`: the source key does not exist).
    centre: Option<(f64, f64)>,
    kind: Kind,
    per_unit: f64,
    with_dist: bool,
    with_hash: bool,
    with_coord: bool,
    /// Ascending (`Some(false)`), descending (`Some(true)`) or as found.
    desc: Option<bool>,
    count: usize,
    any: bool,
    /// STORE/STOREDIST destination and whether it stores distances.
    store: Option<(Bytes, bool)>,
    /// GEOSEARCH's forms (their store's keyspace event is named differently).
    search: bool,
}

/// A radius or box side and its unit: `(value, metres per unit)`.
fn distance_args(v: &[u8], u: &[u8], what: &str) -> Result<(f64, f64), Reply> {
    let r = parse_f64(v).ok_or_else(|| Reply::err(format!("need numeric {what}")))?;
    if r < 0.0 {
        return Err(Reply::err("radius cannot be negative"));
    }
    Ok((r, unit(u)?))
}

/// The point a member of the source set stands for.
fn member_point(txn: &Txn<'_>, src: &[u8], z: zstore::Zset, m: &[u8]) -> Result<(f64, f64), Reply> {
    match zstore::score_of(txn, src, z, m)? {
        Some(s) => Ok(hash::point_of(s as u64)),
        None => Err(Reply::err("could not decode requested zset member")),
    }
}

/// Parses a search in Redis's order (the centre and fixed arguments, then the options one
/// by one, then their combinations); `a[src_at]` is the source key.
fn parse_query(
    txn: &Txn<'_>,
    a: &[Bytes],
    src_at: usize,
    form: Form,
    store_allowed: bool,
) -> Result<Query, Reply> {
    let src = &a[src_at];
    let z = get_zset(txn, src)?;
    let mut q = Query {
        search: form.searching(),
        centre: None,
        kind: Kind::Radius(0.0),
        per_unit: 1.0,
        with_dist: false,
        with_hash: false,
        with_coord: false,
        desc: None,
        count: 0,
        any: false,
        store: (form == Form::SearchStore).then(|| (a[1].clone(), false)),
    };
    let mut i = match form {
        Form::Radius => {
            q.centre = Some(lon_lat(&a[2], &a[3])?);
            let (r, u) = distance_args(&a[4], &a[5], "radius")?;
            (q.kind, q.per_unit) = (Kind::Radius(r), u);
            6
        }
        Form::ByMember => {
            // Without the source key Redis checks no further fixed argument.
            if let Some(z) = z {
                q.centre = Some(member_point(txn, src, z, &a[2])?);
                let (r, u) = distance_args(&a[3], &a[4], "radius")?;
                (q.kind, q.per_unit) = (Kind::Radius(r), u);
            }
            5
        }
        Form::Search => 2,
        Form::SearchStore => 3,
    };
    let (mut from_member, mut from_point, mut by_radius, mut by_box) = (false, false, false, false);
    while i < a.len() {
        let more = a.len() - 1 - i;
        let o = a[i].to_ascii_uppercase();
        match o.as_slice() {
            b"WITHDIST" => q.with_dist = true,
            b"WITHHASH" => q.with_hash = true,
            b"WITHCOORD" => q.with_coord = true,
            b"ANY" => q.any = true,
            b"ASC" => q.desc = Some(false),
            b"DESC" => q.desc = Some(true),
            b"COUNT" if more >= 1 => {
                let n = parse_i64(&a[i + 1]).ok_or_else(|| Reply::err(NOT_INT))?;
                if n <= 0 {
                    return Err(Reply::err("COUNT must be > 0"));
                }
                q.count = n as usize;
                i += 1;
            }
            b"STORE" | b"STOREDIST" if store_allowed && !form.searching() && more >= 1 => {
                q.store = Some((a[i + 1].clone(), o.as_slice() == b"STOREDIST"));
                i += 1;
            }
            b"STOREDIST" if form == Form::SearchStore => {
                q.store = Some((a[1].clone(), true));
            }
            b"FROMMEMBER" if form.searching() && more >= 1 && !from_point => {
                if let Some(z) = z {
                    q.centre = Some(member_point(txn, src, z, &a[i + 1])?);
                }
                from_member = true;
                i += 1;
            }
            b"FROMLONLAT" if form.searching() && more >= 2 && !from_member => {
                let p = lon_lat(&a[i + 1], &a[i + 2])?;
                if z.is_some() {
                    q.centre = Some(p);
                }
                from_point = true;
                i += 2;
            }
            b"BYRADIUS" if form.searching() && more >= 2 && !by_box => {
                let (r, u) = distance_args(&a[i + 1], &a[i + 2], "radius")?;
                (q.kind, q.per_unit) = (Kind::Radius(r), u);
                by_radius = true;
                i += 2;
            }
            b"BYBOX" if form.searching() && more >= 3 && !by_radius => {
                let w = parse_f64(&a[i + 1]).ok_or_else(|| Reply::err("need numeric width"))?;
                let h = parse_f64(&a[i + 2]).ok_or_else(|| Reply::err("need numeric height"))?;
                if w < 0.0 || h < 0.0 {
                    return Err(Reply::err("height or width cannot be negative"));
                }
                (q.kind, q.per_unit) = (Kind::Box(w, h), unit(&a[i + 3])?);
                by_box = true;
                i += 3;
            }
            _ => return Err(syntax()),
        }
        i += 1;
    }
    if q.store.is_some() && (q.with_dist || q.with_hash || q.with_coord) {
        let what = if form == Form::SearchStore {
            "GEOSEARCHSTORE"
        } else {
            "STORE option in GEORADIUS"
        };
        return Err(Reply::err(format!(
            "{what} is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        )));
    }
    let name = String::from_utf8_lossy(&a[0]);
    if form.searching() && from_member == from_point {
        return Err(Reply::err(format!(
            "exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}"
        )));
    }
    if form.searching() && by_radius == by_box {
        return Err(Reply::err(format!(
            "exactly one of BYRADIUS and BYBOX can be specified for {name}"
        )));
    }
    if q.any && q.count == 0 {
        return Err(Reply::err("the ANY argument requires COUNT argument"));
    }
    if z.is_none() {
        q.centre = None;
    }
    Ok(q)
}

/// Runs a search on the set at `src`: the reply, or (STORE) the number of members stored.
fn run(txn: &mut Txn<'_>, src: &[u8], q: Query) -> R {
    let z = get_zset(txn, src)?;
    let mut found: Vec<Found> = match (z, q.centre) {
        (Some(z), Some((lon, lat))) => {
            let kind = match q.kind {
                Kind::Radius(r) => Kind::Radius(r * q.per_unit),
                Kind::Box(w, h) => Kind::Box(w * q.per_unit, h * q.per_unit),
            };
            let shape = Shape { lon, lat, kind };
            search::search(txn, src, z, &shape, if q.any { q.count } else { 0 })?
        }
        _ => Vec::new(),
    };
    // COUNT without ANY returns the nearest.
    let desc = match q.desc {
        None if q.count > 0 && !q.any => Some(false),
        d => d,
    };
    if let Some(desc) = desc {
        found.sort_by(|x, y| {
            let o = x.dist.total_cmp(&y.dist);
            if desc { o.reverse() } else { o }
        });
    }
    if q.count > 0 {
        found.truncate(q.count);
    }
    if let Some((dst, store_dist)) = q.store {
        let members: Vec<(Vec<u8>, f64)> = found
            .into_iter()
            .map(|f| {
                let score = if store_dist {
                    f.dist / q.per_unit
                } else {
                    f.score as f64
                };
                (f.member, score)
            })
            .collect();
        // Redis 7.0 names the event after the command's STORE form: GEOSEARCHSTORE
        // sends `geosearchstore`, GEORADIUS[BYMEMBER] ... STORE sends `georadiusstore`.
        let event = if q.search {
            "geosearchstore"
        } else {
            "georadiusstore"
        };
        return super::zsets::algebra::store_result(txn, &dst, members, event);
    }
    let plain = !(q.with_dist || q.with_hash || q.with_coord);
    Ok(Reply::Array(
        found
            .into_iter()
            .map(|f| {
                if plain {
                    return Reply::bulk(f.member);
                }
                let mut row = vec![Reply::bulk(f.member)];
                if q.with_dist {
                    row.push(dist_reply(f.dist, q.per_unit));
                }
                if q.with_hash {
                    row.push(Reply::Int(f.score as i64));
                }
                if q.with_coord {
                    row.push(coords_reply(f.score));
                }
                Reply::Array(row)
            })
            .collect(),
    ))
}

/// `GEORADIUS key lon lat radius unit [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT n [ANY]]
/// [ASC|DESC] [STORE key] [STOREDIST key]`
pub fn georadius(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let q = parse_query(txn, a, 1, Form::Radius, true)?;
    run(txn, &a[1], q)
}

/// `GEORADIUS_RO`: GEORADIUS without STORE.
pub fn georadius_ro(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let q = parse_query(txn, a, 1, Form::Radius, false)?;
    run(txn, &a[1], q)
}

/// `GEORADIUSBYMEMBER key member radius unit ...` (GEORADIUS's options)
pub fn georadiusbymember(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let q = parse_query(txn, a, 1, Form::ByMember, true)?;
    run(txn, &a[1], q)
}

/// `GEORADIUSBYMEMBER_RO`: without STORE.
pub fn georadiusbymember_ro(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let q = parse_query(txn, a, 1, Form::ByMember, false)?;
    run(txn, &a[1], q)
}

/// `GEOSEARCH key FROMMEMBER m | FROMLONLAT lon lat BYRADIUS r unit | BYBOX w h unit
/// [ASC|DESC] [COUNT n [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]`
pub fn geosearch(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let q = parse_query(txn, a, 1, Form::Search, false)?;
    run(txn, &a[1], q)
}

/// `GEOSEARCHSTORE dst src ... [STOREDIST]`: GEOSEARCH's members (or distances) stored as
/// a sorted set in `dst`.
pub fn geosearchstore(txn: &mut Txn<'_>, a: &[Bytes]) -> R {
    let q = parse_query(txn, a, 2, Form::SearchStore, true)?;
    run(txn, &a[2], q)
}
