package hdfs

import (
	"os"

	hdfs "github.com/colinmarc/hdfs/v2/internal/protocol/hadoop_hdfs"
	"google.golang.org/protobuf/proto"
)

// RecoverLease asks the namenode to recover the lease of a file that another
// client left open (its writer died), like DistributedFileSystem.recoverLease
// in the Java client. It returns true if the file is closed: it was already,
// or the namenode could close it at once. Otherwise the namenode has started
// block recovery, which makes the datanodes agree on the length of the last
// block and then closes the file; call RecoverLease again (it returns true
// once the file is closed). A file closed by recovery holds at least every
// byte its writer synced with Hsync.
func (c *Client) RecoverLease(name string) (bool, error) {
	req := &hdfs.RecoverLeaseRequestProto{
		Src:        proto.String(name),
		ClientName: proto.String(c.namenode.ClientName),
	}
	resp := &hdfs.RecoverLeaseResponseProto{}

	err := c.namenode.Execute("recoverLease", req, resp)
	if err != nil {
		return false, &os.PathError{"recoverLease", name, interpretException(err)}
	}

	return resp.GetResult(), nil
}
