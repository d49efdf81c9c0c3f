package config

// What stowage says of the security switches it does not implement.
// Turned off they are accepted (and have no effect); turned on they are
// refused, as open-source Hazelcast refuses to start when Enterprise
// security is enabled, rather than run with less protection than the
// file asks for.
const (
	firewallMemberPorts = "firewall the member port (network.port) and the transport port so that only the cluster's members reach them"

	whyMemberSecurity = "stowage does not implement Hazelcast Enterprise's security block; set it to false and authenticate members with hazelcast.network.ssl (certificates or a shared key), or " + firewallMemberPorts

	whyMemberTLS = "advanced-network endpoints are not used by stowage; set it to false here and configure member TLS in hazelcast.network.ssl, or " + firewallMemberPorts

	whySymmetricEncryption = "symmetric encryption (a deprecated Hazelcast Enterprise feature) is not implemented; set it to false and turn on hazelcast.network.ssl instead (docs/security.md), which encrypts the transport and the gossip, or " + firewallMemberPorts

	whyClientTLS = "stowage members do not accept TLS connections; set it to false and " + firewallMemberPorts
)

// scanSecurity searches a block stowage does not model key by key
// (advanced-network and its endpoint configurations) for ssl and
// symmetric-encryption switches, and refuses one that is on.
func (n node) scanSecurity() error {
	es, err := n.entries()
	if err != nil || len(es) == 0 {
		return err
	}
	for _, e := range es {
		if !e.val.isMapping() {
			continue
		}
		why := ""
		switch e.key {
		case "ssl":
			why = whyMemberTLS
		case "symmetric-encryption":
			why = whySymmetricEncryption
		}
		if sw := e.val.child("enabled"); why != "" && !sw.null() {
			if err := sw.refuseIfOn(why); err != nil {
				return err
			}
		}
		if err := e.val.scanSecurity(); err != nil {
			return err
		}
	}
	return nil
}
