//! The shared backend: a PostgreSQL server (`--db postgres://user@host/db`,
//! or over a Unix socket `postgresql://user@/db?host=/run/postgresql`),
//! through the synchronous `postgres` crate (pure Rust: the binary stays
//! static). No TLS: reach the server over a socket, a trusted network or a
//! tunnel.

use super::{Backend, Conn, DbError, Value};
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls};
use std::collections::HashMap;

pub struct Postgres {
    client: Client,
    /// Statements prepared on this connection, by their SQL (one round
    /// trip saved per statement; an import runs a few dozen).
    prepared: HashMap<String, postgres::Statement>,
}

/// The URL without its password, for messages: the `user:password@`
/// form and a `password=` in the query (issue 43, item 19) both shown as `***`.
pub fn redact(url: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, Some(q)),
        None => (url, None),
    };
    let mut out = match (base.find("://"), base.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let user = &base[s + 3..at];
            match user.find(':') {
                Some(c) => format!("{}{}:***{}", &base[..s + 3], &user[..c], &base[at..]),
                None => base.to_string(),
            }
        }
        _ => base.to_string(),
    };
    if let Some(q) = query {
        let hidden: Vec<String> = q
            .split('&')
            .map(|kv| match kv.split_once('=') {
                Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                _ => kv.to_string(),
            })
            .collect();
        out = format!("{out}?{}", hidden.join("&"));
    }
    out
}

fn error(e: postgres::Error) -> DbError {
    match e.code() {
        Some(c) if *c == postgres::error::SqlState::UNIQUE_VIOLATION => DbError::Race(e.to_string()),
        // Serialization failures and deadlocks: another writer won; retry.
        Some(c) if *c == postgres::error::SqlState::T_R_SERIALIZATION_FAILURE || *c == postgres::error::SqlState::T_R_DEADLOCK_DETECTED => {
            DbError::Race(e.to_string())
        }
        _ => DbError::Sql(e.as_db_error().map_or_else(|| e.to_string(), |d| d.message().to_string())),
    }
}

impl Postgres {
    pub fn open(url: &str) -> Result<Postgres, DbError> {
        let client = Client::connect(url, NoTls).map_err(|e| DbError::Open(redact(url), e.to_string()))?;
        Ok(Postgres { client, prepared: HashMap::new() })
    }
}

fn bind(args: &[Value]) -> Vec<Box<dyn ToSql + Sync>> {
    args.iter()
        .map(|a| -> Box<dyn ToSql + Sync> {
            match a {
                Value::Text(t) => Box::new(t.clone()),
                Value::Int(i) => Box::new(*i),
                Value::Real(f) => Box::new(*f),
            }
        })
        .collect()
}

fn read(row: &postgres::Row, i: usize) -> Result<Value, postgres::Error> {
    let t = row.columns()[i].type_();
    Ok(if *t == Type::INT8 {
        Value::Int(row.try_get(i)?)
    } else if *t == Type::INT4 {
        Value::Int(row.try_get::<_, Option<i32>>(i)?.map(i64::from))
    } else if *t == Type::FLOAT8 {
        Value::Real(row.try_get(i)?)
    } else {
        Value::Text(row.try_get(i)?)
    })
}

struct Tx<'a>(postgres::Transaction<'a>, &'a mut HashMap<String, postgres::Statement>);

impl Tx<'_> {
    fn statement(&mut self, sql: &str, args: &[Value]) -> Result<(postgres::Statement, Vec<Box<dyn ToSql + Sync>>), DbError> {
        if let Some(st) = self.1.get(sql) {
            return Ok((st.clone(), bind(args)));
        }
        let types: Vec<Type> = args
            .iter()
            .map(|a| match a {
                Value::Text(_) => Type::TEXT,
                Value::Int(_) => Type::INT8,
                Value::Real(_) => Type::FLOAT8,
            })
            .collect();
        let st = self.0.prepare_typed(sql, &types).map_err(error)?;
        self.1.insert(sql.to_string(), st.clone());
        Ok((st, bind(args)))
    }
}

fn refs(b: &[Box<dyn ToSql + Sync>]) -> Vec<&(dyn ToSql + Sync)> {
    b.iter().map(|x| x.as_ref()).collect()
}

impl Conn for Tx<'_> {
    fn exec(&mut self, sql: &str, args: &[Value]) -> Result<u64, DbError> {
        let (st, b) = self.statement(sql, args)?;
        self.0.execute(&st, &refs(&b)).map_err(error)
    }

    fn query(&mut self, sql: &str, args: &[Value]) -> Result<Vec<Vec<Value>>, DbError> {
        let (st, b) = self.statement(sql, args)?;
        let rows = self.0.query(&st, &refs(&b)).map_err(error)?;
        rows.iter().map(|r| (0..r.len()).map(|i| read(r, i)).collect::<Result<Vec<_>, _>>().map_err(error)).collect()
    }

    fn lock_schema(&mut self) -> Result<(), DbError> {
        // One key for oscycles' schema changes, released at commit.
        self.0.execute("SELECT pg_advisory_xact_lock(7273001)", &[]).map_err(error)?;
        Ok(())
    }
}

impl Backend for Postgres {
    fn transaction(&mut self, f: &mut dyn FnMut(&mut dyn Conn) -> Result<(), DbError>) -> Result<(), DbError> {
        let mut tx = Tx(self.client.transaction().map_err(error)?, &mut self.prepared);
        f(&mut tx)?;
        tx.0.commit().map_err(error)
    }
}
