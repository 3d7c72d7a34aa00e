//! The server: one Redis or Valkey server, or a Redis Cluster (every blob goes to the node of
//! the filter's key), through the redis crate; creation of the filter and pipelined bulk adds.

use redis::cluster::{cluster_pipe, ClusterClient, ClusterConnection};
use redis::{Client, Connection, RedisError, Value};

use crate::input::Batch;
use crate::Create;

/// A connection to the server or the cluster.
pub enum Server {
    /// One server.
    Single(Connection),
    /// A Redis Cluster (boxed: its connection is several times one server's).
    Cluster(Box<ClusterConnection>),
}

impl Server {
    /// Connects to `url` (a node of a cluster with `cluster`) and checks that it answers.
    pub fn connect(url: &str, cluster: bool) -> Result<Self, String> {
        let failed = |e: RedisError| format!("cannot connect to {url}: {e}");
        let mut server = if cluster {
            let client = ClusterClient::new(vec![url]).map_err(failed)?;
            Server::Cluster(Box::new(client.get_connection().map_err(failed)?))
        } else {
            let client = Client::open(url).map_err(failed)?;
            Server::Single(client.get_connection().map_err(failed)?)
        };
        server.query(&redis::cmd("PING")).map_err(failed)?;
        Ok(server)
    }

    fn query(&mut self, cmd: &redis::Cmd) -> Result<Value, RedisError> {
        match self {
            Server::Single(c) => cmd.query(c),
            Server::Cluster(c) => cmd.query(c.as_mut()),
        }
    }

    /// Creates the filter with `create`'s options when any is given and the key is missing; an
    /// existing filter is kept as it is.
    pub fn create(&mut self, key: &str, cuckoo: bool, create: &Create) -> Result<(), String> {
        let bloom_only = create.error_rate.is_some()
            || create.nonscaling
            || create.window.is_some()
            || create.sliding;
        if cuckoo && bloom_only {
            return Err(
                "--error-rate, --nonscaling, --window and --sliding are a Bloom \
                        filter's: a cuckoo filter takes --capacity and --expansion"
                    .into(),
            );
        }
        let Some(capacity) = create.capacity else {
            let given = create.error_rate.is_some()
                || create.expansion.is_some()
                || create.nonscaling
                || create.window.is_some()
                || create.sliding;
            if given {
                return Err("the creation options need --capacity".into());
            }
            return Ok(());
        };
        let mut cmd = if cuckoo {
            let mut cmd = redis::cmd("CF.RESERVE");
            cmd.arg(key).arg(capacity);
            cmd
        } else {
            let Some(error) = create.error_rate else {
                return Err("a Bloom filter's creation needs --error-rate".into());
            };
            let mut cmd = redis::cmd("BF.RESERVE");
            cmd.arg(key).arg(error).arg(capacity);
            if create.nonscaling {
                cmd.arg("NONSCALING");
            }
            if let Some(seconds) = create.window {
                cmd.arg("WINDOW").arg(seconds);
            }
            if create.sliding {
                cmd.arg("SLIDING");
            }
            cmd
        };
        if let Some(expansion) = create.expansion {
            cmd.arg("EXPANSION").arg(expansion);
        }
        match self.query(&cmd) {
            Ok(_) => Ok(()),
            // The filter exists: it is used as it is.
            Err(e) if e.to_string().contains("item exists") => Ok(()),
            Err(e) => Err(format!("cannot create {key}: {e}")),
        }
    }

    /// Sends one bulk add per batch, pipelined, and returns each one's answers.
    pub fn bulkadd(
        &mut self,
        key: &str,
        cuckoo: bool,
        batches: &[Batch],
    ) -> Result<Vec<Vec<u8>>, String> {
        let command = if cuckoo { "CF.BULKADD" } else { "BF.BULKADD" };
        let replies: Vec<Vec<u8>> = match self {
            Server::Single(c) => {
                let mut pipe = redis::pipe();
                for batch in batches {
                    pipe.cmd(command).arg(key).arg("FRAMED").arg(batch.blob());
                }
                pipe.query(c)
            }
            Server::Cluster(c) => {
                let mut pipe = cluster_pipe();
                for batch in batches {
                    pipe.cmd(command).arg(key).arg("FRAMED").arg(batch.blob());
                }
                pipe.query(c.as_mut())
            }
        }
        .map_err(|e| e.to_string())?;
        for (batch, reply) in batches.iter().zip(&replies) {
            if reply.len() != batch.len() {
                return Err(format!(
                    "{command} answered {} bytes for {} items",
                    reply.len(),
                    batch.len()
                ));
            }
        }
        Ok(replies)
    }
}
