//! The OCI distribution protocol, as a client: manifests, blobs and tags
//! read; blobs (monolithic upload) and manifests written.
//!
//! Bounded: every connection, read and write has a timeout (a registry
//! that stops answering fails the operation in seconds, saying so), the
//! client one deadline for all its requests together (a registry that
//! trickles bytes fails the command when it passes), and every body a
//! size limit known before reading it (a blob's announced size is checked
//! first, a 2 GB layer is refused before its first byte).  Every blob and
//! manifest read by digest is checked against it.
//!
//! HTTPS with the system's web roots, or the CA given; plain HTTP only to
//! the hosts granted it ([`PlainHttp`]) or to a registry on the loopback
//! interface that answers TLS in plain HTTP (as docker does); a registry
//! whose certificate fails is an error, never a downgrade.  Every URL a
//! server hands over (a redirect, an upload location, a token realm)
//! follows the same rules: never from HTTPS to plain HTTP, plain HTTP
//! only to a granted host, and the registry's Authorization only to the
//! registry's own scheme, host and port.  Authentication: anonymous,
//! then a bearer token from the realm the registry names (with the
//! credentials given, if they are for that registry), or basic
//! credentials.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use ureq::http;

use crate::OciError;
use crate::reference::Reference;
use crate::types::Descriptor;
use crate::types::DescriptorChecks as _;

/// Most tags read of one repository: a component's versions are far
/// fewer, and a registry that lists millions must not exhaust memory.
pub const MAX_TAGS: usize = 100_000;
/// Largest manifest read (the distribution specification's limit).
pub const MAX_MANIFEST_BYTES: u64 = 4 << 20;
/// Largest tag list, token or error answer read.
const MAX_SMALL_BYTES: u64 = 4 << 20;
/// Redirects followed for one request.
const MAX_REDIRECTS: usize = 10;

/// The registry hosts spoken to in plain HTTP (besides a loopback
/// registry that answers TLS in plain HTTP).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlainHttp {
    /// These hosts only (`HOST[:PORT]`, as references name them; no port
    /// means 80); every other host gets HTTPS.
    Hosts(BTreeSet<String>),
    /// Every host (`--plain-http`).
    All,
}

impl Default for PlainHttp {
    fn default() -> PlainHttp {
        PlainHttp::Hosts(BTreeSet::new())
    }
}

/// A user name and password (or token), and the registries they are for.
#[derive(Clone, Debug, Default)]
pub struct Credentials {
    /// The user name.
    pub username: String,
    /// The password or token.
    pub password: String,
    /// The registries (`HOST[:PORT]`) that get them, as basic credentials
    /// or to the token realm they name; more with
    /// [`Client::send_credentials_to`].  No other registry does.
    pub registries: BTreeSet<String>,
}

/// How to reach registries.
#[derive(Clone, Debug)]
pub struct Options {
    /// The timeout of each connection, read and write.
    pub timeout: Duration,
    /// How long all the client's requests may take together, from its
    /// creation (each request gets what is left).
    pub deadline: Duration,
    /// The hosts spoken to in plain HTTP.
    pub plain_http: PlainHttp,
    /// A CA certificate (PEM) to trust instead of the web roots.
    pub ca_pem: Option<Vec<u8>>,
    /// User name and password (or token), for the registries they name.
    pub credentials: Option<Credentials>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            timeout: Duration::from_secs(10),
            deadline: COMMAND_DEADLINE,
            plain_http: PlainHttp::default(),
            ca_pem: None,
            credentials: None,
        }
    }
}

/// The longest all the requests of one command may take together,
/// whatever the per-read timeout (a 256 MiB layer at 1 MiB/s fits).
pub const COMMAND_DEADLINE: Duration = Duration::from_secs(600);

/// A URL's scheme (`http` or `https`), host (lower case) and port.
type Origin = (&'static str, String, u16);

/// A registry client (one per command: it remembers each registry's
/// scheme and tokens, and the command's deadline runs from its creation).
pub struct Client {
    /// For HTTPS URLs: speaks no plain HTTP at all.
    agent: ureq::Agent,
    /// For the plain HTTP URLs granted.
    plain: ureq::Agent,
    options: Options,
    /// When the command's time is up.
    deadline: Option<Instant>,
    schemes: RefCell<BTreeMap<String, &'static str>>,
    /// Authorization header values by registry.
    auth: RefCell<BTreeMap<String, String>>,
    /// The registries the credentials are for.
    credential_registries: RefCell<BTreeSet<String>>,
}

/// One request of [`Client::request`].
struct Call<'a> {
    method: http::Method,
    registry: &'a str,
    url: &'a str,
    headers: &'a [(&'a str, &'a str)],
    body: Option<&'a [u8]>,
    limit: u64,
    what: &'a str,
}

/// A response read whole.
struct Answer {
    headers: http::HeaderMap,
    body: Vec<u8>,
}

fn is_loopback(registry: &str) -> bool {
    let host = match registry.rsplit_once(':') {
        Some((h, p)) if p.bytes().all(|b| b.is_ascii_digit()) => h,
        _ => registry,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|a| a.is_loopback())
}

/// `HOST[:PORT]` as a lower-case host and a port (`default` when none is
/// written); `None` for anything else (user information included).
fn host_port(authority: &str, default: u16) -> Option<(String, u16)> {
    if authority.contains('@') {
        return None;
    }
    let a: http::uri::Authority = authority.parse().ok()?;
    Some((
        a.host().to_ascii_lowercase(),
        a.port_u16().unwrap_or(default),
    ))
}

/// Whether two registry names are the same host (and port, when
/// written).
fn same_host(a: &str, b: &str) -> bool {
    match (host_port(a, 0), host_port(b, 0)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

/// The scheme, host and port of an `http` or `https` URL.
fn origin(url: &str) -> Option<Origin> {
    let u: http::Uri = url.parse().ok()?;
    let (scheme, default) = match u.scheme_str()?.to_ascii_lowercase().as_str() {
        "https" => ("https", 443),
        "http" => ("http", 80),
        _ => return None,
    };
    let (host, port) = host_port(u.authority()?.as_str(), default)?;
    Some((scheme, host, port))
}

/// A URL for error messages (it may come from the server).
fn shown(url: &str) -> String {
    wloc_trust::text::sanitize(url, 200)
}

fn refused(url: &str, why: impl Into<String>) -> OciError {
    OciError::Refused {
        url: shown(url),
        why: why.into(),
    }
}

/// The URL a server's `Location` (a redirect, an upload location) names
/// from `from`: absolute, or a path on the same origin.  A location
/// that would take an HTTPS exchange to plain HTTP is refused.
fn follow(from: &str, location: &str) -> Result<String, OciError> {
    let here = origin(from).ok_or_else(|| refused(from, "not an http or https URL"))?;
    let next = if let Some(rest) = location.strip_prefix("//") {
        format!("{}://{rest}", here.0)
    } else if location.starts_with('/') {
        let u: http::Uri = from
            .parse()
            .map_err(|_| refused(from, "not an http or https URL"))?;
        let authority = u.authority().map(|a| a.as_str()).unwrap_or_default();
        format!("{}://{authority}{location}", here.0)
    } else {
        location.to_string()
    };
    let there = origin(&next).ok_or_else(|| {
        refused(
            location,
            format!(
                "the location given by {} is not an http or https URL",
                shown(from)
            ),
        )
    })?;
    if here.0 == "https" && there.0 == "http" {
        return Err(refused(
            &next,
            format!(
                "{} sent here over plain HTTP: an HTTPS exchange is never continued in plain HTTP",
                shown(from)
            ),
        ));
    }
    Ok(next)
}

impl Client {
    /// A client with these options; the command's deadline starts now.
    pub fn new(options: Options) -> Result<Client, OciError> {
        use ureq::tls::{Certificate, RootCerts, TlsConfig};
        // A deadline too far to represent is none.
        let deadline = Instant::now().checked_add(options.deadline);
        let mut tls = TlsConfig::builder();
        if let Some(pem) = &options.ca_pem {
            let certs: Vec<Certificate<'static>> = ureq::tls::parse_pem(pem)
                .filter_map(|i| match i {
                    Ok(ureq::tls::PemItem::Certificate(c)) => Some(Ok(c)),
                    Ok(_) => None,
                    Err(e) => Some(Err(e)),
                })
                .collect::<Result<_, _>>()
                .map_err(|e| OciError::invalid("the CA certificate", e.to_string()))?;
            if certs.is_empty() {
                return Err(OciError::invalid(
                    "the CA certificate",
                    "no PEM certificate in it",
                ));
            }
            tls = tls.root_certs(RootCerts::new_with_certs(&certs));
        }
        let t = Some(options.timeout);
        let tls = tls.build();
        // Two agents: HTTPS URLs go through one that speaks no plain
        // HTTP at all; plain HTTP URLs are sent only once granted (see
        // `check`).  Neither follows redirects itself: `send` does, so
        // that each hop passes the same checks as the first URL.  The
        // overall limit is set per request: what is left of the
        // command's deadline.
        let config = |https_only: bool| {
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .https_only(https_only)
                .max_redirects(0)
                .timeout_resolve(t)
                .timeout_connect(t)
                .timeout_send_request(t)
                .timeout_recv_response(t)
                .timeout_per_read(t)
                .timeout_per_write(t)
                .tls_config(tls.clone())
                .user_agent(concat!("wloc/", env!("CARGO_PKG_VERSION")))
                .build()
        };
        let agent = ureq::Agent::new_with_config(config(true));
        let plain = ureq::Agent::new_with_config(config(false));
        let credential_registries = options
            .credentials
            .as_ref()
            .map(|c| c.registries.clone())
            .unwrap_or_default();
        Ok(Client {
            agent,
            plain,
            options,
            deadline,
            schemes: RefCell::default(),
            auth: RefCell::default(),
            credential_registries: RefCell::new(credential_registries),
        })
    }

    /// Lets the credentials go to `registry` too (the registry a
    /// reference names, once a wkg name is resolved).
    pub fn send_credentials_to(&self, registry: &str) {
        self.credential_registries
            .borrow_mut()
            .insert(registry.to_string());
    }

    /// Basic credentials, if given for `registry`.
    fn basic_for(&self, registry: &str) -> Option<String> {
        use base64::Engine as _;
        let c = self.options.credentials.as_ref()?;
        let ours = self
            .credential_registries
            .borrow()
            .iter()
            .any(|r| same_host(r, registry));
        ours.then(|| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD
                    .encode(format!("{}:{}", c.username, c.password))
            )
        })
    }

    /// What is left of the command's deadline (`None`: no deadline).
    fn time_left(&self, url: &str) -> Result<Option<Duration>, OciError> {
        let Some(deadline) = self.deadline else {
            return Ok(None);
        };
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .map(Some)
            .ok_or_else(|| self.deadline_passed(url))
    }

    fn deadline_passed(&self, url: &str) -> OciError {
        OciError::Deadline {
            url: shown(url),
            seconds: self.options.deadline.as_secs_f64(),
        }
    }

    fn transport(&self, url: &str, e: ureq::Error) -> OciError {
        let why = match e {
            ureq::Error::Timeout(ureq::Timeout::Global) => return self.deadline_passed(url),
            ureq::Error::Timeout(t) => format!(
                "no answer within {} s ({t}): the registry is not responding",
                self.options.timeout.as_secs_f64()
            ),
            ureq::Error::BodyExceedsLimit(n) => format!("answer larger than {n} bytes"),
            e => e.to_string(),
        };
        OciError::Transport {
            url: shown(url),
            why,
        }
    }

    /// Whether plain HTTP to `host`:`port` was granted: `--plain-http`,
    /// a host named, or a loopback registry found without TLS.
    fn plain_granted(&self, host: &str, port: u16) -> bool {
        let is = |r: &str| host_port(r, 80).is_some_and(|(h, p)| h == host && p == port);
        let named = match &self.options.plain_http {
            PlainHttp::All => return true,
            PlainHttp::Hosts(hosts) => hosts.iter().any(|r| is(r)),
        };
        named
            || self
                .schemes
                .borrow()
                .iter()
                .any(|(r, s)| *s == "http" && is(r))
    }

    /// The origin of `url` if the client may send it anything: an http
    /// or https URL, and plain HTTP only to a granted host.
    fn check(&self, url: &str) -> Result<Origin, OciError> {
        let o = origin(url).ok_or_else(|| refused(url, "not an http or https URL"))?;
        if o.0 == "http" && !self.plain_granted(&o.1, o.2) {
            return Err(refused(
                url,
                format!(
                    "plain HTTP to {}:{} was not granted (only --plain-http, wkg's protocol = \"http\" for that host, or a loopback registry without TLS get it)",
                    o.1, o.2
                ),
            ));
        }
        Ok(o)
    }

    /// Whether plain HTTP is granted to `registry` by the options.
    fn plain_named(&self, registry: &str) -> bool {
        match &self.options.plain_http {
            PlainHttp::All => true,
            PlainHttp::Hosts(hosts) => hosts.iter().any(|h| same_host(h, registry)),
        }
    }

    /// `scheme://registry`, choosing the scheme on first use.
    fn base(&self, registry: &str) -> Result<String, OciError> {
        if let Some(s) = self.schemes.borrow().get(registry) {
            return Ok(format!("{s}://{registry}"));
        }
        let scheme = if self.plain_named(registry) {
            "http"
        } else if is_loopback(registry) && self.options.ca_pem.is_none() {
            // A loopback registry without TLS (docker's rule): HTTPS if
            // it answers it, else HTTP.
            // A registry that speaks TLS but fails its checks (an unknown
            // CA) is an error, never a reason to downgrade.
            let url = format!("https://{registry}/v2/");
            let left = self.time_left(&url)?;
            let probe = self
                .agent
                .get(&url)
                .config()
                .timeout_global(left)
                .build()
                .call();
            match probe {
                Ok(_) => "https",
                Err(e) if not_tls(&e) => "http",
                Err(e) => return Err(self.transport(&url, e)),
            }
        } else {
            "https"
        };
        self.schemes
            .borrow_mut()
            .insert(registry.to_string(), scheme);
        Ok(format!("{scheme}://{registry}"))
    }

    /// One exchange, within what is left of the deadline.
    fn run<S: ureq::AsSendBody>(
        &self,
        agent: &ureq::Agent,
        req: http::Request<S>,
        url: &str,
    ) -> Result<http::Response<ureq::Body>, OciError> {
        let left = self.time_left(url)?;
        let req = agent.configure_request(req).timeout_global(left).build();
        agent.run(req).map_err(|e| self.transport(url, e))
    }

    /// A request, following redirects; each URL is checked (`check`,
    /// `follow`), and `auth` (the origin it is for, the header) goes
    /// only to that origin.  The answer, and the URL that gave it (after
    /// redirects: a 401 is the registry's only if that URL is).
    fn send(
        &self,
        method: &http::Method,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        auth: Option<(&Origin, &str)>,
    ) -> Result<(http::Response<ureq::Body>, String), OciError> {
        let mut method = method.clone();
        let mut body = body;
        let mut url = url.to_string();
        for _ in 0..=MAX_REDIRECTS {
            let here = self.check(&url)?;
            let mut b = http::Request::builder().method(method.clone()).uri(&url);
            for (k, v) in headers {
                b = b.header(*k, *v);
            }
            if let Some((o, a)) = auth
                && *o == here
            {
                b = b.header("Authorization", a);
            }
            let agent = if here.0 == "http" {
                &self.plain
            } else {
                &self.agent
            };
            let bad = |e: http::Error| OciError::invalid(shown(&url), e.to_string());
            let r = match body {
                Some(bytes) => self.run(agent, b.body(bytes).map_err(bad)?, &url)?,
                None => self.run(agent, b.body(()).map_err(bad)?, &url)?,
            };
            let status = r.status().as_u16();
            let location = r
                .headers()
                .get("location")
                .and_then(|v| v.to_str().ok())
                .map(str::to_string);
            let (true, Some(location)) = (matches!(status, 301 | 302 | 303 | 307 | 308), location)
            else {
                return Ok((r, url));
            };
            url = follow(&url, &location)?;
            // As browsers do: 307 and 308 repeat the request, the others
            // fetch the new place.
            if !matches!(status, 307 | 308) && method != http::Method::HEAD {
                method = http::Method::GET;
                body = None;
            }
        }
        Err(refused(
            &url,
            format!("more than {MAX_REDIRECTS} redirects"),
        ))
    }

    /// Reads a body whole, refusing more than `limit` bytes (an
    /// announced length over it before reading anything).
    fn read_body(
        &self,
        url: &str,
        mut r: http::Response<ureq::Body>,
        limit: u64,
        what: &str,
    ) -> Result<Answer, OciError> {
        if let Some(n) = content_length(r.headers())
            && n > limit
        {
            return Err(OciError::TooLarge {
                what: what.to_string(),
                size: n,
                limit,
            });
        }
        let body = r
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_vec()
            .map_err(|e| match e {
                ureq::Error::BodyExceedsLimit(_) => OciError::TooLarge {
                    what: what.to_string(),
                    size: limit + 1,
                    limit,
                },
                e => self.transport(url, e),
            })?;
        Ok(Answer {
            headers: r.headers().clone(),
            body,
        })
    }

    /// The origin of a registry (its scheme chosen).
    fn registry_origin(&self, registry: &str) -> Result<Origin, OciError> {
        let base = self.base(registry)?;
        origin(&base).ok_or_else(|| OciError::Reference {
            text: wloc_trust::text::sanitize(registry, 100),
            why: "not a registry host".into(),
        })
    }

    /// One request, authenticated as the registry asks (once), its
    /// answer read whole up to `c.limit` bytes when successful.  The
    /// registry's Authorization goes only to its own origin, and a 401
    /// from elsewhere (an upload location on another host) is not
    /// answered with it.
    fn request(&self, c: Call<'_>) -> Result<Answer, OciError> {
        let Call {
            method,
            registry,
            url,
            headers,
            body,
            limit,
            what,
        } = c;
        let own = self.registry_origin(registry)?;
        let auth = self.auth.borrow().get(registry).cloned();
        let (mut r, answered_by) = self.send(
            &method,
            url,
            headers,
            body,
            auth.as_deref().map(|a| (&own, a)),
        )?;
        // A 401 from where a redirect led (a blob store, a CDN) is not the
        // registry's: its realm gets no credentials, its token is not kept.
        if r.status() == http::StatusCode::UNAUTHORIZED
            && origin(&answered_by).as_ref() == Some(&own)
        {
            let challenge = r
                .headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let header = self.authenticate(registry, url, &challenge)?;
            self.auth
                .borrow_mut()
                .insert(registry.to_string(), header.clone());
            r = self
                .send(&method, url, headers, body, Some((&own, &header)))?
                .0;
        }
        let status = r.status().as_u16();
        if (200..300).contains(&status) {
            if method == http::Method::HEAD {
                // Its Content-Length is the blob's, not of a body.
                return Ok(Answer {
                    headers: r.headers().clone(),
                    body: Vec::new(),
                });
            }
            return self.read_body(url, r, limit, what);
        }
        // An error's own message, short.
        let answer = self.read_body(url, r, 64 << 10, what).ok();
        if status == 404 {
            return Err(OciError::NotFound(what.to_string()));
        }
        let detail = answer
            .and_then(|a| serde_json::from_slice::<ErrorBody>(&a.body).ok())
            .and_then(|e| e.errors.into_iter().next())
            .map(|e| {
                format!(
                    ": {} {}",
                    wloc_trust::text::sanitize(&e.code, 60),
                    wloc_trust::text::sanitize(&e.message, 200)
                )
            })
            .unwrap_or_default();
        Err(OciError::Status {
            url: shown(url),
            status,
            detail,
        })
    }

    /// Why a registry asking for credentials gets none.
    fn no_credentials(&self, registry: &str) -> String {
        match &self.options.credentials {
            None => ": the registry asks for credentials (give them with --username and WLOC_REGISTRY_PASSWORD)".into(),
            Some(_) => {
                let to: Vec<String> = self.credential_registries.borrow().iter().cloned().collect();
                format!(
                    ": the registry asks for credentials; those given are for {} only, not for {}",
                    if to.is_empty() { "no registry".to_string() } else { to.join(", ") },
                    wloc_trust::text::sanitize(registry, 100)
                )
            }
        }
    }

    /// The Authorization header a `WWW-Authenticate` challenge of
    /// `registry` asks for.
    fn authenticate(&self, registry: &str, url: &str, challenge: &str) -> Result<String, OciError> {
        let basic = self.basic_for(registry);
        let (scheme, params) = parse_challenge(challenge);
        match scheme.to_ascii_lowercase().as_str() {
            "basic" => basic.ok_or_else(|| OciError::Status {
                url: shown(url),
                status: 401,
                detail: self.no_credentials(registry),
            }),
            "bearer" => {
                let realm = params.get("realm").ok_or_else(|| {
                    OciError::invalid(shown(url), "a bearer challenge without a realm")
                })?;
                // The realm is a URL the registry hands over: plain HTTP
                // only to a host granted it (credentials go there).
                let realm_origin = origin(realm)
                    .ok_or_else(|| refused(realm, "the token realm is not an http or https URL"))?;
                if realm_origin.0 == "http" && !self.plain_granted(&realm_origin.1, realm_origin.2)
                {
                    return Err(refused(
                        realm,
                        format!(
                            "the token realm {} names is plain HTTP to {}:{}, a host not granted plain HTTP (it would get the credentials and the token in clear text)",
                            shown(url),
                            realm_origin.1,
                            realm_origin.2
                        ),
                    ));
                }
                let mut token_url = realm.clone();
                let mut sep = if realm.contains('?') { '&' } else { '?' };
                for k in ["service", "scope"] {
                    if let Some(v) = params.get(k) {
                        token_url.push(sep);
                        token_url.push_str(k);
                        token_url.push('=');
                        token_url.push_str(&percent_encode(v));
                        sep = '&';
                    }
                }
                let r = self
                    .send(
                        &http::Method::GET,
                        &token_url,
                        &[],
                        None,
                        basic.as_deref().map(|b| (&realm_origin, b)),
                    )?
                    .0;
                let status = r.status().as_u16();
                let a = self.read_body(&token_url, r, MAX_SMALL_BYTES, "the token")?;
                if status != 200 {
                    return Err(OciError::Status {
                        url: shown(&token_url),
                        status,
                        detail: if status == 401 && basic.is_none() {
                            format!(": no token{}", self.no_credentials(registry))
                        } else {
                            ": no token".into()
                        },
                    });
                }
                #[derive(serde::Deserialize)]
                struct Token {
                    token: Option<String>,
                    access_token: Option<String>,
                }
                let t: Token = serde_json::from_slice(&a.body)
                    .map_err(|e| OciError::invalid("the token answer", e.to_string()))?;
                let t = t
                    .token
                    .or(t.access_token)
                    .ok_or_else(|| OciError::invalid("the token answer", "no token in it"))?;
                if t.is_empty() || t.bytes().any(|b| b.is_ascii_control() || b == b' ') {
                    return Err(OciError::invalid("the token answer", "an invalid token"));
                }
                Ok(format!("Bearer {t}"))
            }
            _ => Err(OciError::Status {
                url: shown(url),
                status: 401,
                detail: format!(
                    ": unsupported authentication {:?}",
                    wloc_trust::text::sanitize(&scheme, 40)
                ),
            }),
        }
    }

    fn url(&self, r: &Reference, kind: &str, what: &str) -> Result<String, OciError> {
        Ok(format!(
            "{}/v2/{}/{kind}/{what}",
            self.base(&r.registry)?,
            r.repository
        ))
    }

    /// The manifest `r` names (by digest if it has one, checked), its
    /// media type and digest.
    pub fn manifest(&self, r: &Reference) -> Result<(Vec<u8>, String, String), OciError> {
        let url = self.url(r, "manifests", r.manifest_ref())?;
        let accept = [
            crate::types::MANIFEST,
            crate::types::INDEX,
            "application/vnd.docker.distribution.manifest.v2+json",
        ]
        .join(", ");
        let what = format!("manifest {r}");
        let a = self.request(Call {
            method: http::Method::GET,
            registry: &r.registry,
            url: &url,
            headers: &[("Accept", &accept)],
            body: None,
            limit: MAX_MANIFEST_BYTES,
            what: &what,
        })?;
        let digest = crate::digest_of(&a.body);
        let expected = r.digest.clone().or_else(|| {
            a.headers
                .get("docker-content-digest")
                .and_then(|v| v.to_str().ok())
                .filter(|d| d.starts_with("sha256:"))
                .map(str::to_string)
        });
        if let Some(e) = expected
            && e != digest
        {
            return Err(OciError::Digest {
                what,
                expected: e,
                actual: digest,
            });
        }
        let media_type = a
            .headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        Ok((a.body, media_type, digest))
    }

    /// The blob `d` names in `r`'s repository: refused before download if
    /// announced larger than `limit`, checked against its digest and size.
    pub fn blob(&self, r: &Reference, d: &Descriptor, limit: u64) -> Result<Vec<u8>, OciError> {
        let what = format!("blob {} of {}", d.digest, r.name());
        d.check_within(&what, limit)?;
        let url = self.url(r, "blobs", &d.digest)?;
        let a = self.request(Call {
            method: http::Method::GET,
            registry: &r.registry,
            url: &url,
            headers: &[],
            body: None,
            limit: d.size,
            what: &what,
        })?;
        crate::check_blob(&what, &a.body, d)?;
        Ok(a.body)
    }

    /// The referrers API's answer for the manifest `digest` in `r`'s
    /// repository (an image index of at most `limit` bytes), or `None`
    /// where the registry has no referrers API: it answers 404 then
    /// (the specification's signal; 400, 405 and 501 are read alike, as
    /// registries that route no such path answer them; reading the
    /// referrers tag instead is safe, what it lists is verified alike).
    pub fn referrers(
        &self,
        r: &Reference,
        digest: &str,
        limit: u64,
    ) -> Result<Option<Vec<u8>>, OciError> {
        let url = self.url(r, "referrers", digest)?;
        let what = format!("referrers of {}@{digest}", r.name());
        match self.request(Call {
            method: http::Method::GET,
            registry: &r.registry,
            url: &url,
            headers: &[("Accept", crate::types::INDEX)],
            body: None,
            limit,
            what: &what,
        }) {
            Ok(a) => Ok(Some(a.body)),
            Err(OciError::NotFound(_)) => Ok(None),
            Err(OciError::Status { status, .. }) if [400, 405, 501].contains(&status) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The tags of `r`'s repository (every page, at most [`MAX_TAGS`]).
    pub fn tags(&self, r: &Reference) -> Result<Vec<String>, OciError> {
        #[derive(serde::Deserialize)]
        struct Tags {
            #[serde(default)]
            tags: Option<Vec<String>>,
        }
        let base = self.base(&r.registry)?;
        let mut url = format!("{base}/v2/{}/tags/list", r.repository);
        let mut out = Vec::new();
        for _ in 0..100 {
            let what = format!("tags of {}", r.name());
            let a = self.request(Call {
                method: http::Method::GET,
                registry: &r.registry,
                url: &url,
                headers: &[],
                body: None,
                limit: MAX_SMALL_BYTES,
                what: &what,
            })?;
            let t: Tags = serde_json::from_slice(&a.body)
                .map_err(|e| OciError::invalid(&what, e.to_string()))?;
            out.extend(t.tags.unwrap_or_default());
            if out.len() > MAX_TAGS {
                return Err(OciError::invalid(
                    &what,
                    format!("more than {MAX_TAGS} tags, the most wloc reads of one repository"),
                ));
            }
            // `Link: </v2/...?last=x&n=y>; rel="next"`, on this registry.
            match a
                .headers
                .get("link")
                .and_then(|v| v.to_str().ok())
                .and_then(|l| l.split_once('<'))
                .and_then(|(_, rest)| rest.split_once('>'))
                .map(|(u, _)| u.to_string())
            {
                Some(next) if next.starts_with("/v2/") => url = format!("{base}{next}"),
                _ => return Ok(out),
            }
        }
        Ok(out)
    }

    /// Whether the repository has the blob.
    pub fn has_blob(&self, r: &Reference, digest: &str) -> Result<bool, OciError> {
        let url = self.url(r, "blobs", digest)?;
        match self.request(Call {
            method: http::Method::HEAD,
            registry: &r.registry,
            url: &url,
            headers: &[],
            body: None,
            limit: 0,
            what: "a blob",
        }) {
            Ok(_) => Ok(true),
            Err(OciError::NotFound(_)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Uploads a blob (unless the repository has it): one POST opening
    /// the upload, one PUT with the whole blob and its digest.
    pub fn push_blob(&self, r: &Reference, bytes: &[u8]) -> Result<Descriptor, OciError> {
        let digest = crate::digest_of(bytes);
        let d = Descriptor {
            media_type: String::new(),
            digest: digest.clone(),
            size: bytes.len() as u64,
            artifact_type: None,
            annotations: BTreeMap::new(),
        };
        if self.has_blob(r, &digest)? {
            return Ok(d);
        }
        let base = self.base(&r.registry)?;
        let url = format!("{base}/v2/{}/blobs/uploads/", r.repository);
        let what = format!("upload to {}", r.name());
        let a = self.request(Call {
            method: http::Method::POST,
            registry: &r.registry,
            url: &url,
            headers: &[("Content-Length", "0")],
            body: Some(&[]),
            limit: MAX_SMALL_BYTES,
            what: &what,
        })?;
        let location = a
            .headers
            .get("location")
            .and_then(|v| v.to_str().ok())
            .ok_or_else(|| OciError::invalid(&what, "the registry gave no upload location"))?;
        // A URL the registry hands over: never a downgrade to plain HTTP
        // (and `send` grants plain HTTP and the Authorization per host).
        let mut put = follow(&url, location).map_err(|e| match e {
            OciError::Refused { url, why } => OciError::Refused {
                url,
                why: format!("the upload location for {what}: {why}"),
            },
            e => e,
        })?;
        put.push(if put.contains('?') { '&' } else { '?' });
        put.push_str("digest=");
        put.push_str(&percent_encode(&digest));
        self.request(Call {
            method: http::Method::PUT,
            registry: &r.registry,
            url: &put,
            headers: &[("Content-Type", "application/octet-stream")],
            body: Some(bytes),
            limit: MAX_SMALL_BYTES,
            what: &what,
        })?;
        Ok(d)
    }

    /// Puts a manifest under `reference` (a tag or its digest).
    pub fn push_manifest(
        &self,
        r: &Reference,
        reference: &str,
        bytes: &[u8],
        media_type: &str,
    ) -> Result<(), OciError> {
        let url = self.url(r, "manifests", reference)?;
        self.request(Call {
            method: http::Method::PUT,
            registry: &r.registry,
            url: &url,
            headers: &[("Content-Type", media_type)],
            body: Some(bytes),
            limit: MAX_SMALL_BYTES,
            what: &format!("manifest {}:{reference}", r.name()),
        })?;
        Ok(())
    }

    /// A small document (the registry's well-known metadata), `None` if
    /// it is not there; plain HTTP only to a host granted it.
    pub fn get_small(&self, url: &str) -> Result<Option<Vec<u8>>, OciError> {
        let (r, _) = self.send(&http::Method::GET, url, &[], None, None)?;
        if r.status() != http::StatusCode::OK {
            return Ok(None);
        }
        Ok(Some(self.read_body(url, r, 1 << 20, url)?.body))
    }

    /// The scheme used for a registry (`http` or `https`).
    pub fn scheme(&self, registry: &str) -> Result<&'static str, OciError> {
        let b = self.base(registry)?;
        Ok(if b.starts_with("https:") {
            "https"
        } else {
            "http"
        })
    }
}

/// Whether a TLS attempt failed because the peer does not speak TLS (it
/// answered the hello with something else), not for a failed check.
fn not_tls(e: &ureq::Error) -> bool {
    let inner = match e {
        ureq::Error::Rustls(r) => Some(r),
        ureq::Error::Io(io) => io.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()),
        _ => None,
    };
    matches!(inner, Some(rustls::Error::InvalidMessage(_)))
}

fn content_length(h: &http::HeaderMap) -> Option<u64> {
    h.get("content-length")?.to_str().ok()?.trim().parse().ok()
}

#[derive(serde::Deserialize)]
struct ErrorBody {
    #[serde(default)]
    errors: Vec<RegistryError>,
}

#[derive(serde::Deserialize)]
struct RegistryError {
    #[serde(default)]
    code: String,
    #[serde(default)]
    message: String,
}

/// `Bearer realm="...",service="...",scope="..."`: the scheme and its
/// parameters (quoted strings may hold commas).
fn parse_challenge(c: &str) -> (String, BTreeMap<String, String>) {
    let c = c.trim();
    let (scheme, rest) = c.split_once(' ').unwrap_or((c, ""));
    let mut params = BTreeMap::new();
    let mut rest = rest.trim();
    while let Some((k, v)) = rest.split_once('=') {
        let k = k.trim().trim_start_matches(',').trim().to_ascii_lowercase();
        let v = v.trim_start();
        let (value, after) = if let Some(q) = v.strip_prefix('"') {
            match q.split_once('"') {
                Some((val, after)) => (val.to_string(), after),
                None => (q.to_string(), ""),
            }
        } else {
            match v.split_once(',') {
                Some((val, after)) => (val.trim().to_string(), after),
                None => (v.trim().to_string(), ""),
            }
        };
        params.insert(k, value);
        rest = after.trim_start().trim_start_matches(',').trim_start();
    }
    (scheme.to_string(), params)
}

/// Percent-encodes a query value (RFC 3986 unreserved characters kept).
fn percent_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges() {
        let (s, p) = parse_challenge(
            r#"Bearer realm="https://auth.example/token",service="reg",scope="repository:a/b:pull,push""#,
        );
        assert_eq!(s, "Bearer");
        assert_eq!(p["realm"], "https://auth.example/token");
        assert_eq!(p["scope"], "repository:a/b:pull,push");
        let (s, p) = parse_challenge(r#"Basic realm="Registry Realm""#);
        assert_eq!(
            (s.as_str(), p["realm"].as_str()),
            ("Basic", "Registry Realm")
        );
        assert_eq!(percent_encode("sha256:ab"), "sha256%3Aab");
    }

    #[test]
    fn loopback() {
        assert!(is_loopback("127.0.0.1:5000"));
        assert!(is_loopback("localhost"));
        assert!(is_loopback("[::1]:5000"));
        assert!(!is_loopback("ghcr.io"));
        assert!(!is_loopback("10.0.0.1:5000"));
    }
}

/// The transport rules against a fake HTTP server in a thread.
#[cfg(test)]
mod transport {
    use super::*;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};

    /// A request the fake received.
    #[derive(Clone, Debug)]
    struct Seen {
        method: String,
        path: String,
        authorization: Option<String>,
    }

    /// An answer: the response's bytes, and a pause before each byte of
    /// its body (a trickling server).
    type Reply = (Vec<u8>, Duration);

    fn reply(status: &str, headers: &[(&str, &str)], body: &[u8]) -> Reply {
        let mut r = format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n",
            body.len()
        );
        for (k, v) in headers {
            r.push_str(&format!("{k}: {v}\r\n"));
        }
        r.push_str("\r\n");
        let mut bytes = r.into_bytes();
        bytes.extend_from_slice(body);
        (bytes, Duration::ZERO)
    }

    /// A fake server on 127.0.0.1: answers a TLS hello in plain HTTP (a
    /// registry without TLS), every request with `answer`, and records
    /// them; it stops when dropped.
    struct Fake {
        host: String,
        seen: Arc<Mutex<Vec<Seen>>>,
        stop: Arc<AtomicBool>,
    }

    impl Drop for Fake {
        fn drop(&mut self) {
            self.stop.store(true, Ordering::Relaxed);
        }
    }

    impl Fake {
        fn start(answer: impl Fn(&Seen) -> Reply + Send + 'static) -> Fake {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            listener.set_nonblocking(true).unwrap();
            let host = listener.local_addr().unwrap().to_string();
            let seen = Arc::new(Mutex::new(Vec::new()));
            let stop = Arc::new(AtomicBool::new(false));
            let (seen2, stop2) = (seen.clone(), stop.clone());
            std::thread::spawn(move || {
                let end = Instant::now() + Duration::from_secs(60);
                while !stop2.load(Ordering::Relaxed) && Instant::now() < end {
                    let Ok((mut s, _)) = listener.accept() else {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    };
                    let _ = s.set_nonblocking(false);
                    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                    let mut first = [0u8; 1];
                    if s.peek(&mut first).is_err() {
                        continue;
                    }
                    if first[0] == 0x16 {
                        // A TLS hello: this server speaks plain HTTP.
                        let _ = s.write_all(&reply("400 Bad Request", &[], b"").0);
                        continue;
                    }
                    let mut r = BufReader::new(s.try_clone().unwrap());
                    let mut line = String::new();
                    if r.read_line(&mut line).is_err() {
                        continue;
                    }
                    let mut words = line.split_whitespace();
                    let mut seen = Seen {
                        method: words.next().unwrap_or("").to_string(),
                        path: words.next().unwrap_or("").to_string(),
                        authorization: None,
                    };
                    let mut length = 0usize;
                    loop {
                        let mut h = String::new();
                        if r.read_line(&mut h).map_or(true, |n| n == 0) || h == "\r\n" {
                            break;
                        }
                        if let Some((k, v)) = h.split_once(':') {
                            let v = v.trim().to_string();
                            match k.to_ascii_lowercase().as_str() {
                                "authorization" => seen.authorization = Some(v),
                                "content-length" => length = v.parse().unwrap_or(0),
                                _ => {}
                            }
                        }
                    }
                    let _ = r.read_exact(&mut vec![0u8; length]);
                    seen2.lock().unwrap().push(seen.clone());
                    let (bytes, pause) = answer(&seen);
                    let split = bytes
                        .windows(4)
                        .position(|w| w == b"\r\n\r\n")
                        .map_or(bytes.len(), |p| p + 4);
                    let _ = s.write_all(&bytes[..split]);
                    for b in &bytes[split..] {
                        std::thread::sleep(pause);
                        if s.write_all(&[*b]).is_err() {
                            break;
                        }
                    }
                }
            });
            Fake { host, seen, stop }
        }

        fn seen(&self) -> Vec<Seen> {
            self.seen.lock().unwrap().clone()
        }
    }

    fn hosts(h: &[&str]) -> PlainHttp {
        PlainHttp::Hosts(h.iter().map(|s| s.to_string()).collect())
    }

    fn credentials(for_registry: &str) -> Option<Credentials> {
        Some(Credentials {
            username: "user".into(),
            password: "secret".into(),
            registries: [for_registry.to_string()].into(),
        })
    }

    const BASIC: &str = "Basic dXNlcjpzZWNyZXQ=";

    /// A registry asking for basic credentials, then answering `then`.
    fn basic_registry(then: impl Fn(&Seen) -> Reply + Send + 'static) -> Fake {
        Fake::start(move |s| match &s.authorization {
            Some(a) if a == BASIC => then(s),
            _ => reply(
                "401 Unauthorized",
                &[("WWW-Authenticate", r#"Basic realm="test""#)],
                b"",
            ),
        })
    }

    #[test]
    fn server_locations_never_leave_https() {
        let up = "https://reg.example/v2/a/b/blobs/uploads/";
        let e = follow(up, "http://reg.example/upload?id=1").unwrap_err();
        assert!(
            matches!(e, OciError::Refused { .. })
                && e.to_string().contains("never continued in plain HTTP"),
            "{e}"
        );
        assert!(follow(up, "HTTP://cdn.example/x").is_err());
        assert_eq!(
            follow(up, "/upload?id=1").unwrap(),
            "https://reg.example/upload?id=1"
        );
        assert_eq!(
            follow(up, "//cdn.example/x").unwrap(),
            "https://cdn.example/x"
        );
        assert_eq!(
            follow(up, "https://cdn.example/x").unwrap(),
            "https://cdn.example/x"
        );
        assert!(follow(up, "ftp://cdn.example/x").is_err());
        assert!(follow(up, "upload").is_err());
        // From plain HTTP anywhere is a URL; whether it may be spoken to
        // is `check`'s (plain HTTP only to granted hosts).
        assert!(follow("http://127.0.0.1:5000/v2/", "https://cdn.example/x").is_ok());
    }

    #[test]
    fn an_upload_location_elsewhere_gets_no_authorization() {
        let other = Fake::start(|_| reply("201 Created", &[], b""));
        let location = format!("http://{}/upload?id=1", other.host);
        let reg = basic_registry(move |s| match s.method.as_str() {
            "HEAD" => reply("404 Not Found", &[], b""),
            "POST" => reply("202 Accepted", &[("Location", &location)], b""),
            _ => reply("500 Internal Server Error", &[], b""),
        });
        let r = Reference::parse(&format!("{}/a/b", reg.host)).unwrap();
        // Plain HTTP granted to both hosts: the upload reaches the other
        // host, without the registry's credentials.
        let client = Client::new(Options {
            plain_http: hosts(&[&reg.host, &other.host]),
            credentials: credentials(&reg.host),
            ..Options::default()
        })
        .unwrap();
        client.push_blob(&r, b"hello").unwrap();
        let at_reg = reg.seen();
        assert!(
            at_reg
                .iter()
                .any(|s| s.method == "POST" && s.authorization.as_deref() == Some(BASIC)),
            "{at_reg:?}"
        );
        let at_other = other.seen();
        assert_eq!(at_other.len(), 1, "{at_other:?}");
        assert_eq!(at_other[0].method, "PUT");
        assert!(
            at_other[0]
                .path
                .starts_with("/upload?id=1&digest=sha256%3A")
        );
        assert_eq!(at_other[0].authorization, None, "{at_other:?}");
        // Plain HTTP granted to the registry only: the other host is
        // refused before anything is sent to it.
        let client = Client::new(Options {
            plain_http: hosts(&[&reg.host]),
            credentials: credentials(&reg.host),
            ..Options::default()
        })
        .unwrap();
        let e = client.push_blob(&r, b"other").unwrap_err();
        assert!(
            matches!(e, OciError::Refused { .. })
                && e.to_string()
                    .contains(&format!("plain HTTP to {} was not granted", other.host)),
            "{e}"
        );
        assert_eq!(other.seen().len(), 1);
    }

    #[test]
    fn a_redirect_elsewhere_gets_no_authorization() {
        let other =
            Fake::start(|_| reply("200 OK", &[("Content-Type", crate::types::MANIFEST)], b"{}"));
        let location = format!("http://{}/elsewhere", other.host);
        let reg = basic_registry(move |_| {
            reply("307 Temporary Redirect", &[("Location", &location)], b"")
        });
        let r = Reference::parse(&format!("{}/a/b:1", reg.host)).unwrap();
        let client = Client::new(Options {
            plain_http: hosts(&[&reg.host, &other.host]),
            credentials: credentials(&reg.host),
            ..Options::default()
        })
        .unwrap();
        let (body, _, _) = client.manifest(&r).unwrap();
        assert_eq!(body, b"{}");
        let at_other = other.seen();
        assert_eq!(at_other.len(), 1);
        assert_eq!(at_other[0].authorization, None, "{at_other:?}");
    }

    /// A redirect to another host that answers 401 naming its own realm:
    /// the realm gets no credentials, and nothing it hands out becomes
    /// the registry's Authorization.
    #[test]
    fn a_401_where_a_redirect_led_is_not_the_registrys() {
        let me = Arc::new(Mutex::new(String::new()));
        let me2 = me.clone();
        let other = Fake::start(move |s| {
            if s.path.starts_with("/token") {
                return reply("200 OK", &[], br#"{"token":"planted"}"#);
            }
            let realm = format!("Bearer realm=\"http://{}/token\"", me2.lock().unwrap());
            reply("401 Unauthorized", &[("WWW-Authenticate", &realm)], b"")
        });
        *me.lock().unwrap() = other.host.clone();
        let realm_host = other.host.clone();
        let location = format!("http://{}/blobstore", other.host);
        // The registry redirects before asking for any credentials.
        let reg =
            Fake::start(move |_| reply("307 Temporary Redirect", &[("Location", &location)], b""));
        let r = Reference::parse(&format!("{}/a/b:1", reg.host)).unwrap();
        let client = Client::new(Options {
            plain_http: hosts(&[&reg.host, &realm_host]),
            credentials: credentials(&reg.host),
            ..Options::default()
        })
        .unwrap();
        assert!(client.manifest(&r).is_err());
        let at_other = other.seen();
        assert!(
            at_other.iter().all(|s| s.authorization.is_none()),
            "{at_other:?}"
        );
        assert!(
            at_other.iter().all(|s| !s.path.starts_with("/token")),
            "{at_other:?}"
        );
        assert!(
            client
                .auth
                .borrow()
                .values()
                .all(|a| !a.contains("planted")),
            "{:?}",
            client.auth.borrow()
        );
    }

    #[test]
    fn plain_http_is_per_host() {
        let client = Client::new(Options {
            plain_http: hosts(&["reg.example:5000"]),
            ..Options::default()
        })
        .unwrap();
        assert_eq!(client.scheme("reg.example:5000").unwrap(), "http");
        assert_eq!(client.scheme("10.1.2.3:5000").unwrap(), "https");
        assert_eq!(client.scheme("reg.example").unwrap(), "https");
        let e = client.check("http://10.1.2.3:5000/v2/").unwrap_err();
        assert!(e.to_string().contains("not granted"), "{e}");
        let all = Client::new(Options {
            plain_http: PlainHttp::All,
            ..Options::default()
        })
        .unwrap();
        assert_eq!(all.scheme("10.1.2.3:5000").unwrap(), "http");
    }

    /// A registry (loopback, without TLS) asking for a token from `realm`
    /// (`SELF` is its own host), then listing one tag.
    fn bearer_registry(realm: &'static str) -> Fake {
        let me = Arc::new(Mutex::new(String::new()));
        let me2 = me.clone();
        let fake = Fake::start(move |s| {
            if s.path.starts_with("/token") {
                return match s.authorization.as_deref() {
                    Some(BASIC) => reply("200 OK", &[], br#"{"token":"t0k"}"#),
                    _ => reply("401 Unauthorized", &[], b""),
                };
            }
            if s.path == "/v2/" {
                return reply("200 OK", &[], b"{}");
            }
            match s.authorization.as_deref() {
                Some("Bearer t0k") => reply("200 OK", &[], br#"{"tags":["1.0.0"]}"#),
                _ => {
                    let realm = realm.replace("SELF", &me2.lock().unwrap());
                    reply(
                        "401 Unauthorized",
                        &[(
                            "WWW-Authenticate",
                            &format!(
                                r#"Bearer realm="{realm}",service="x",scope="repository:a/b:pull""#
                            ),
                        )],
                        b"",
                    )
                }
            }
        });
        *me.lock().unwrap() = fake.host.clone();
        fake
    }

    #[test]
    fn a_plain_http_token_realm_must_be_granted() {
        // The realm on another host than the loopback registry found
        // without TLS: not fetched, nothing sent in clear text.
        let reg = bearer_registry("http://localhost:9/token");
        let r = Reference::parse(&format!("{}/a/b", reg.host)).unwrap();
        let client = Client::new(Options {
            credentials: credentials(&reg.host),
            ..Options::default()
        })
        .unwrap();
        assert_eq!(client.scheme(&reg.host).unwrap(), "http");
        let e = client.tags(&r).unwrap_err();
        assert!(
            matches!(e, OciError::Refused { .. })
                && e.to_string()
                    .contains("plain HTTP to localhost:9, a host not granted plain HTTP"),
            "{e}"
        );
        // The realm on the registry itself: granted (the same host).
        let reg = bearer_registry("http://SELF/token");
        let r = Reference::parse(&format!("{}/a/b", reg.host)).unwrap();
        let client = Client::new(Options {
            credentials: credentials(&reg.host),
            ..Options::default()
        })
        .unwrap();
        assert_eq!(client.tags(&r).unwrap(), ["1.0.0"]);
        assert!(
            reg.seen()
                .iter()
                .any(|s| s.path.starts_with("/token?service=x")
                    && s.authorization.as_deref() == Some(BASIC)),
            "{:?}",
            reg.seen()
        );
    }

    #[test]
    fn credentials_go_only_to_their_registry() {
        let reg = basic_registry(|_| reply("200 OK", &[], br#"{"tags":[]}"#));
        let r = Reference::parse(&format!("{}/a/b", reg.host)).unwrap();
        let client = Client::new(Options {
            plain_http: hosts(&[&reg.host]),
            credentials: credentials("registry.example"),
            ..Options::default()
        })
        .unwrap();
        let e = client.tags(&r).unwrap_err();
        assert!(
            e.to_string()
                .contains("those given are for registry.example only"),
            "{e}"
        );
        assert!(reg.seen().iter().all(|s| s.authorization.is_none()));
        // Named for it: sent.
        client.send_credentials_to(&reg.host);
        assert!(client.tags(&r).unwrap().is_empty());
    }

    #[test]
    fn one_deadline_for_all_the_requests() {
        // Each answer trickles for about 0.6 s: within the per-read
        // timeout, and each within the deadline, but not two of them.
        let reg = Fake::start(|_| {
            let (b, _) = reply("200 OK", &[], br#"{"tags":[]}"#);
            (b, Duration::from_millis(50))
        });
        let r = Reference::parse(&format!("{}/a/b", reg.host)).unwrap();
        let client = Client::new(Options {
            plain_http: hosts(&[&reg.host]),
            timeout: Duration::from_secs(5),
            deadline: Duration::from_secs(1),
            ..Options::default()
        })
        .unwrap();
        let start = Instant::now();
        client.tags(&r).unwrap();
        let e = client.tags(&r).unwrap_err();
        assert!(matches!(e, OciError::Deadline { .. }), "{e}");
        assert!(
            e.to_string().contains("the command's deadline passed (1 s"),
            "{e}"
        );
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{:?}",
            start.elapsed()
        );
        // And nothing more is asked once it has passed.
        let n = reg.seen().len();
        assert!(client.tags(&r).is_err());
        assert_eq!(reg.seen().len(), n);
        // A deadline too far to represent is none (no overflow).
        let client = Client::new(Options {
            plain_http: hosts(&[&reg.host]),
            deadline: Duration::MAX,
            ..Options::default()
        })
        .unwrap();
        client.tags(&r).unwrap();
    }
}
