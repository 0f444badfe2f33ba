# ssl context creation (the system CA store), hashlib, hmac, secrets, uuid, random.
import hashlib, hmac, random, secrets, ssl, uuid

ctx = ssl.create_default_context()
assert ctx.verify_mode == ssl.CERT_REQUIRED
ctx.load_default_certs()
assert hashlib.sha256(b"x").hexdigest().startswith("2d711642")
assert hashlib.new("sha3_256", b"x").digest_size == 32
assert hashlib.pbkdf2_hmac("sha256", b"pw", b"salt", 1000)
assert hmac.compare_digest(hmac.new(b"k", b"m", "sha256").digest(), hmac.new(b"k", b"m", "sha256").digest())
assert len(secrets.token_hex(16)) == 32
uuid.uuid4()
uuid.uuid1()
random.SystemRandom().random()
