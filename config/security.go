package config

// What stowage says of the security switches it does not implement.
// Turned off they are accepted (and have no effect); turned on they are
// refused, as open-source Hazelcast refuses to start when Enterprise
// security is enabled, rather than run with less protection than the
// file asks for.
const (
	firewallMemberPorts = "firewall the member port (network.port) and the transport port so that only the cluster's members reach them"

	whyMemberSecurity = "member and client authentication is a Hazelcast Enterprise feature (open-source Hazelcast refuses to start with it too) and stowage has none; set it to false and " + firewallMemberPorts

	whyMemberTLS = "stowage members do not speak TLS to each other; set it to false and " + firewallMemberPorts

	whySymmetricEncryption = "stowage does not encrypt member traffic (symmetric encryption is a deprecated Hazelcast Enterprise feature); set it to false and " + firewallMemberPorts

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
