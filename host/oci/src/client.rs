//! The OCI distribution protocol, as a client: manifests, blobs and tags
//! read; blobs (monolithic upload) and manifests written.
//!
//! Bounded: every connection, read and write has a timeout (a registry
//! that stops answering fails the operation in seconds, saying so), and
//! every body a size limit known before reading it (a blob's announced
//! size is checked first, a 2 GB layer is refused before its first
//! byte).  Every blob and manifest read by digest is checked against it.
//!
//! HTTPS with the system's web roots, or the CA given; plain HTTP only
//! when asked (`plain_http`) or for a registry on the loopback interface
//! that answers TLS in plain HTTP (as docker does); a registry whose
//! certificate fails is an error, never a downgrade.  Authentication: anonymous,
//! then a bearer token from the realm the registry names (with the
//! credentials given, if any), or basic credentials.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Duration;

use ureq::http;

use crate::OciError;
use crate::reference::Reference;
use crate::types::Descriptor;
use crate::types::DescriptorChecks as _;

/// Largest manifest read (the distribution specification's limit).
pub const MAX_MANIFEST_BYTES: u64 = 4 << 20;
/// Largest tag list, token or error answer read.
const MAX_SMALL_BYTES: u64 = 4 << 20;

/// How to reach registries.
#[derive(Clone, Debug)]
pub struct Options {
    /// The timeout of each connection, read and write.
    pub timeout: Duration,
    /// Plain HTTP to any registry.
    pub plain_http: bool,
    /// A CA certificate (PEM) to trust instead of the web roots.
    pub ca_pem: Option<Vec<u8>>,
    /// User name and password (or token) for every registry.
    pub credentials: Option<(String, String)>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            timeout: Duration::from_secs(10),
            plain_http: false,
            ca_pem: None,
            credentials: None,
        }
    }
}

/// The longest one request may take, whatever the per-read timeout
/// (a 256 MiB layer at 1 MiB/s fits).
pub const TRANSFER_DEADLINE: Duration = Duration::from_secs(600);

/// A registry client (one per command: it remembers each registry's
/// scheme and tokens).
pub struct Client {
    /// For HTTPS URLs: follows no redirect to plain HTTP.
    agent: ureq::Agent,
    /// For the plain HTTP URLs chosen for a registry.
    plain: ureq::Agent,
    options: Options,
    schemes: RefCell<BTreeMap<String, &'static str>>,
    /// Authorization header values by registry.
    auth: RefCell<BTreeMap<String, String>>,
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

impl Client {
    /// A client with these options.
    pub fn new(options: Options) -> Result<Client, OciError> {
        use ureq::tls::{Certificate, RootCerts, TlsConfig};
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
        // Two agents: requests to a registry reached over HTTPS go through
        // one that follows no redirect to plain HTTP (a registry, or a man
        // in the middle of its CDN, must not downgrade a pull); plain HTTP
        // is used only where it was chosen (`plain_http`, a loopback
        // registry without TLS). Each request has an overall deadline: a
        // registry trickling a byte now and then is cut off too.
        let config = |https_only: bool| {
            ureq::Agent::config_builder()
                .http_status_as_error(false)
                .https_only(https_only)
                .timeout_global(Some(TRANSFER_DEADLINE))
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
        Ok(Client {
            agent,
            plain,
            options,
            schemes: RefCell::default(),
            auth: RefCell::default(),
        })
    }

    fn transport(&self, url: &str, e: ureq::Error) -> OciError {
        let why = match e {
            ureq::Error::Timeout(t) => format!(
                "no answer within {} s ({t}): the registry is not responding",
                self.options.timeout.as_secs_f64()
            ),
            ureq::Error::BodyExceedsLimit(n) => format!("answer larger than {n} bytes"),
            e => e.to_string(),
        };
        OciError::Transport {
            url: url.to_string(),
            why,
        }
    }

    /// `scheme://registry`, choosing the scheme on first use.
    fn base(&self, registry: &str) -> Result<String, OciError> {
        if self.options.plain_http {
            return Ok(format!("http://{registry}"));
        }
        if let Some(s) = self.schemes.borrow().get(registry) {
            return Ok(format!("{s}://{registry}"));
        }
        let scheme = if is_loopback(registry) && self.options.ca_pem.is_none() {
            // A loopback registry without TLS (docker's rule): HTTPS if
            // it answers it, else HTTP.
            // A registry that speaks TLS but fails its checks (an unknown
            // CA) is an error, never a reason to downgrade.
            let url = format!("https://{registry}/v2/");
            match self.agent.get(&url).call() {
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

    fn send(
        &self,
        method: &http::Method,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        auth: Option<&str>,
    ) -> Result<http::Response<ureq::Body>, OciError> {
        let mut b = http::Request::builder().method(method.clone()).uri(url);
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        if let Some(a) = auth {
            b = b.header("Authorization", a);
        }
        let agent = if url.starts_with("http://") {
            &self.plain
        } else {
            &self.agent
        };
        let r = match body {
            Some(bytes) => b
                .body(bytes)
                .map(|req| agent.run(req))
                .map_err(|e| OciError::invalid(url, e.to_string()))?,
            None => b
                .body(())
                .map(|req| agent.run(req))
                .map_err(|e| OciError::invalid(url, e.to_string()))?,
        };
        r.map_err(|e| self.transport(url, e))
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

    /// One request, authenticated as the registry asks (once), its
    /// answer read whole up to `c.limit` bytes when successful.
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
        let auth = self.auth.borrow().get(registry).cloned();
        let mut r = self.send(&method, url, headers, body, auth.as_deref())?;
        if r.status() == http::StatusCode::UNAUTHORIZED {
            let challenge = r
                .headers()
                .get("www-authenticate")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let header = self.authenticate(url, &challenge)?;
            self.auth
                .borrow_mut()
                .insert(registry.to_string(), header.clone());
            r = self.send(&method, url, headers, body, Some(&header))?;
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
            url: url.to_string(),
            status,
            detail,
        })
    }

    /// The Authorization header a `WWW-Authenticate` challenge asks for.
    fn authenticate(&self, url: &str, challenge: &str) -> Result<String, OciError> {
        use base64::Engine as _;
        let basic = self.options.credentials.as_ref().map(|(u, p)| {
            format!(
                "Basic {}",
                base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"))
            )
        });
        let (scheme, params) = parse_challenge(challenge);
        match scheme.to_ascii_lowercase().as_str() {
            "basic" => basic.ok_or_else(|| OciError::Status {
                url: url.to_string(),
                status: 401,
                detail: ": the registry asks for credentials (give them with --username and WLOC_REGISTRY_PASSWORD)".into(),
            }),
            "bearer" => {
                let realm = params.get("realm").ok_or_else(|| {
                    OciError::invalid(url, "a bearer challenge without a realm")
                })?;
                if !(realm.starts_with("https://")
                    || (realm.starts_with("http://") && (self.options.plain_http || url.starts_with("http://"))))
                {
                    return Err(OciError::invalid(
                        url,
                        format!("token realm {:?} is not an https URL", wloc_trust::text::sanitize(realm, 100)),
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
                let r = self.send(&http::Method::GET, &token_url, &[], None, basic.as_deref())?;
                let status = r.status().as_u16();
                let a = self.read_body(&token_url, r, MAX_SMALL_BYTES, "the token")?;
                if status != 200 {
                    return Err(OciError::Status {
                        url: token_url,
                        status,
                        detail: ": no token".into(),
                    });
                }
                #[derive(serde::Deserialize)]
                struct Token {
                    token: Option<String>,
                    access_token: Option<String>,
                }
                let t: Token = serde_json::from_slice(&a.body)
                    .map_err(|e| OciError::invalid("the token answer", e.to_string()))?;
                let t = t.token.or(t.access_token).ok_or_else(|| {
                    OciError::invalid("the token answer", "no token in it")
                })?;
                if t.is_empty() || t.bytes().any(|b| b.is_ascii_control() || b == b' ') {
                    return Err(OciError::invalid("the token answer", "an invalid token"));
                }
                Ok(format!("Bearer {t}"))
            }
            _ => Err(OciError::Status {
                url: url.to_string(),
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

    /// The tags of `r`'s repository (every page).
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
        let mut put = if location.starts_with("http://") || location.starts_with("https://") {
            location.to_string()
        } else if location.starts_with('/') {
            format!("{base}{location}")
        } else {
            return Err(OciError::invalid(&what, "an invalid upload location"));
        };
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

    /// A small document over HTTPS (the registry's well-known metadata),
    /// `None` if it is not there.
    pub fn get_small(&self, url: &str) -> Result<Option<Vec<u8>>, OciError> {
        let r = self.send(&http::Method::GET, url, &[], None, None)?;
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
